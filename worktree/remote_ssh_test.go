package worktree

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/creack/pty"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// sshd is where Debian's openssh-server puts the daemon (.ci/run installs it).
const sshd = "/usr/sbin/sshd"

// sshServer is a real sshd on 127.0.0.1 run by the test with its own host key and one
// authorized client key, serving the bare repository's base directory; clientEnv is the
// GIT_SSH_COMMAND that uses that key and trusts that host key (known) or, with known false,
// knows no host key at all (ssh then asks whether to continue connecting).
type sshServer struct {
	port          int
	key, knownFor string // the client's private key; a known_hosts file holding the host key
	user          string
}

// startSSHServer starts sshd for the test (stopped at its end). It skips when openssh-server
// is not installed, except in CI, where that is a failure.
func startSSHServer(t *testing.T) *sshServer {
	t.Helper()
	if _, err := os.Stat(sshd); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing in CI (.ci/run installs openssh-server): %v", sshd, err)
		}
		t.Skipf("openssh-server not installed: %v", err)
	}
	u, err := user.Current()
	require.NoError(t, err)
	dir := t.TempDir()
	keygen := func(path string) {
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path).CombinedOutput()
		require.NoError(t, err, "ssh-keygen: %s", out)
	}
	hostKey, clientKey := filepath.Join(dir, "host_key"), filepath.Join(dir, "client_key")
	keygen(hostKey)
	keygen(clientKey)
	pub, err := os.ReadFile(clientKey + ".pub")
	require.NoError(t, err)
	auth := filepath.Join(dir, "authorized_keys")
	require.NoError(t, os.WriteFile(auth, pub, 0o600))
	port := freePort(t)
	cfg := filepath.Join(dir, "sshd_config")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`ListenAddress 127.0.0.1
Port %d
HostKey %s
AuthorizedKeysFile %s
PidFile none
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
`, port, hostKey, auth)), 0o600))
	hostPub, err := os.ReadFile(hostKey + ".pub")
	require.NoError(t, err)
	known := filepath.Join(dir, "known_hosts")
	require.NoError(t, os.WriteFile(known, []byte(fmt.Sprintf("[127.0.0.1]:%d %s", port, hostPub)), 0o600))

	if os.Geteuid() == 0 { // sshd run as root wants its privilege separation directory, which
		// the package's service unit makes at boot (RuntimeDirectory=sshd)
		require.NoError(t, os.MkdirAll("/run/sshd", 0o755))
	}
	cmd := exec.Command(sshd, "-D", "-e", "-f", cfg)
	logs := &lockedLog{}
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("sshd log:\n%s", logs.String())
		}
	})
	waitListening(t, port, exited, logs)
	return &sshServer{port: port, key: clientKey, knownFor: known, user: u.Username}
}

// freePort is a TCP port on 127.0.0.1 free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitListening waits until sshd accepts connections on 127.0.0.1:port; it fails when sshd
// exits first (with its log).
func waitListening(t *testing.T, port int, exited <-chan struct{}, logs *lockedLog) {
	t.Helper()
	var err error
	testenv.WaitForState(t, fmt.Sprintf("sshd to listen on %d", port), func() bool {
		var c net.Conn
		if c, err = net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			_ = c.Close()
			return true
		}
		select {
		case <-exited:
			t.Fatalf("sshd exited before listening: %s", logs.String())
		default:
		}
		return false
	}, func() string { return fmt.Sprintf("%v; its log: %s", err, logs.String()) })
}

// lockedLog collects a process's output for the test's log.
type lockedLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// sshCommand is the GIT_SSH_COMMAND of a client with the server's key; known says whether
// the server's host key is in its known_hosts.
func (s *sshServer) sshCommand(known bool) string {
	kh := s.knownFor
	if !known {
		kh = "/dev/null"
	}
	return fmt.Sprintf("ssh -i %s -o IdentitiesOnly=yes -o UserKnownHostsFile=%s -o GlobalKnownHostsFile=/dev/null", s.key, kh)
}

// url is the ssh URL of the bare repository b on this server.
func (s *sshServer) url(b *bareRemote) string {
	return fmt.Sprintf("ssh://%s@127.0.0.1:%d%s", s.user, s.port, b.dir)
}

// serveSSH points b's url at the repository over ssh and makes git processes of this test
// (the managers' and the test's own) use the server's key and known host.
func (b *bareRemote) serveSSH(t *testing.T) {
	t.Helper()
	s := startSSHServer(t)
	t.Setenv("GIT_SSH_COMMAND", s.sshCommand(true))
	b.url = s.url(b)
}

// A node whose host key is unknown to ssh, run with a terminal (as serve or daemon started
// from a person's shell is), does not wait on that terminal for "continue connecting
// (yes/no)?": opening the remote fails with ssh's own message, and nothing is asked on the
// terminal. Without batchMode the ssh under git prompts on the terminal and waits there.
func TestRemote_SSHNeverPromptsOnTheTerminal(t *testing.T) {
	b := newBareRemote(t, map[string]string{"a.txt": "a\n"})
	s := startSSHServer(t)
	cmd := helperCommand("open-remote", helperArgs{DataDir: t.TempDir(), RemoteURL: s.url(b)})
	cmd.Env = append(cmd.Env, "GIT_SSH_COMMAND="+s.sshCommand(false), "DISPLAY=:0", "SSH_ASKPASS=/bin/false")
	tty, err := pty.Start(cmd) // the helper's controlling terminal
	require.NoError(t, err)
	defer tty.Close()
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		r := bufio.NewReader(tty)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				lines <- line
			}
			if err != nil {
				if err != io.EOF {
					return
				}
				return
			}
		}
	}()
	var seen strings.Builder
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // a helper left waiting on a prompt
	for done := false; !done; {
		line, ok := testenv.ReceiveState(t, "the helper to answer (a prompt never ends)", lines,
			func() string { return "its terminal shows:\n" + seen.String() })
		seen.WriteString(line)
		done = !ok || strings.Contains(line, "open failed:") || strings.Contains(line, "opened")
	}
	_ = cmd.Wait()
	out := seen.String()
	require.NotContains(t, out, "continue connecting", "nothing is asked on the terminal")
	require.Contains(t, out, "open failed:")
	require.Contains(t, out, "Host key verification failed", "ssh's own message reaches the caller")
}
