package dashboard_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// TestVendoredAssets: web/vendor holds exactly the graph-layout library package.json pins
// (the VERSION stamp vendor.sh writes, and byte for byte the file of that version as npm
// installs it under the node prefix; in CI the package must be there).
func TestVendoredAssets(t *testing.T) {
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile("package.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &pkg))
	pin := pkg.Dependencies["@dagrejs/dagre"]
	require.Regexp(t, `^\d+\.\d+\.\d+$`, pin, "package.json pins an exact version")
	stamp, err := os.ReadFile("web/vendor/VERSION")
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("@dagrejs/dagre %s dist/dagre.esm.js\n", pin), string(stamp), "run tools/dashboard/vendor.sh")

	mods := testenv.NodeModules(t, "@dagrejs/dagre")
	var installed struct {
		Version string `json:"version"`
	}
	b, err = os.ReadFile(filepath.Join(mods, "@dagrejs", "dagre", "package.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &installed))
	require.Equal(t, pin, installed.Version, "the node prefix holds another dagre than package.json pins: run %s", testenv.InstallHint)
	want, err := os.ReadFile(filepath.Join(mods, "@dagrejs", "dagre", "dist", "dagre.esm.js"))
	require.NoError(t, err)
	got, err := os.ReadFile("web/vendor/dagre.esm.js")
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "web/vendor/dagre.esm.js differs from @dagrejs/dagre %s: run tools/dashboard/vendor.sh", pin)
}

// TestAssetsStayLocal: no embedded asset names another host (no CDN script, font or image):
// the only absolute URL is the SVG namespace, which is a name, not a request.
func TestAssetsStayLocal(t *testing.T) {
	url := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	n := 0
	err := fs.WalkDir(os.DirFS("web"), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, "LICENSE") || path == "vendor/VERSION" {
			return err
		}
		b, err := os.ReadFile(filepath.Join("web", path))
		if err != nil {
			return err
		}
		n++
		for _, m := range url.FindAllString(string(b), -1) {
			if m != "http://www.w3.org" {
				t.Errorf("%s names another host: %s", path, m)
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 6)
}
