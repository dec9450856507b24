/*
Package refagent is the reference agent bundled with mcp-scheduler: a small program that
speaks the NDJSON protocol of docs/protocol.md and follows a script of directives written in
its mission brief. The demo runs it as a real agent (`mcp-scheduler reference-agent`, runtime
ndjson); the supervision tests use its scripted misbehaviours (crash, hang, ignoring SIGTERM,
grandchildren, huge lines, garbage, stderr floods). It really edits files in its workspace and
commits them with git (argv only, never a shell).

# Script language

A script is the set of lines of the mission brief (then of the --script file) whose first
non-blank character is "@" followed by a letter; every other line is prose and ignored. A brief
without directives runs the default plan: write <mission id>.md holding the brief's first line,
commit it, report completed. Directives run in order, one step each:

	@write PATH TEXT         write TEXT to PATH (relative, inside the workspace), replacing it
	@append PATH TEXT        append TEXT to PATH
	@symlink PATH TARGET     make PATH a symbolic link to TARGET (ln -s; TARGET is any text,
	                         absolute or relative); the link counts as written
	@commit MESSAGE          git add the files written since the last commit, git commit
	                         (message given to git on stdin; nothing written = nothing committed)
	@sleep DURATION          wait (100ms, 2s, ...); a cancel interrupts it
	@heartbeat INTERVAL      send agent.heartbeat every INTERVAL from now on (0 stops)
	@progress PERCENT TEXT   task.progress
	@log LEVEL TEXT          task.log (debug, info, warn, error)
	@usage IN OUT USD        task.usage: the attempt has used IN input and OUT output tokens
	                         and USD dollars so far (cumulative; budgets act on it)
	@checkpoint [NOTE]       task.checkpoint {"step": <steps done>, "note": NOTE}
	@yield REASON            task.yield with the same checkpoint, then exit 0 (no result)
	@done [SUMMARY]          worker.result completed (artifacts: files written, evidence: commits)
	@fail KIND SUMMARY       worker.result failed with failure {kind, summary}, exit 1
	@flaky N KIND SUMMARY    like @fail while the attempt number is at most N, else nothing
	@rate-limited N RESET [SUMMARY]
	                         while the attempt number is at most N: task.rate_limit rejected,
	                         resetting RESET (a duration) from now, then @fail rate_limit
	@block DECISION          worker.result blocked, decision DECISION, exit 0
	@verdict VERDICT [TEXT]  a reviewer's worker.result: completed with verdict approved, minor,
	                         severe or insufficient (minor and severe carry one finding)
	@result JSON             print {"type":"worker.result", <JSON members>} as is (to test
	                         results that break the protocol), exit 0
	@crash [CODE]            exit CODE (default 1) at once, without a result
	@hang                    wait until cancelled or killed
	@ignore-sigterm          from now on ignore SIGTERM and agent.cancel (logged), so only
	                         SIGKILL ends the agent
	@deaf                    from now on leave agent.ping unanswered (a wedged agent that
	                         still runs), silently
	@spawn-grandchild [N]    start N (default 1) copies of ourselves that sleep until killed,
	                         in our process group; each pid is logged as "grandchild pid=N"
	@big-line SIZE           one task.log line whose message is SIZE bytes (5MiB, 20MiB, ...)
	@garbage [TEXT]          a line that is not a protocol message
	@raw TEXT                TEXT written to stdout as is (use a Go string literal for "\r\n",
	                         a BOM "\xef\xbb\xbf", ...)
	@stderr SIZE             SIZE bytes of text on stderr
	@env NAME                log "env NAME=value" or "env NAME is unset" (stdout and stderr)
	@resolve                 resolve every file git reports unmerged (conflict markers left by a
	                         merge) by keeping both sides, ours first; the files count as written

TEXT is the rest of the line; when it starts with a double quote it is read as a Go string
literal, so it may hold newlines and escapes. Sizes are bytes or use KiB, MiB, GiB, KB, MB.
The whole script is parsed and checked before any step runs: an unknown directive, a missing
argument or a wrong one (a percent that is not a number, a duration or size that does not
parse, a path outside the workspace, an unknown log level or verdict) fails the attempt
(exit 2) having done nothing. The failure's location is brief:N, N counted from the first
line of the mission's own brief (the scheduler's agent brief puts it under "## What to do";
a brief without that heading counts from its first line), or script:N for the --script file.

Roles: agent.start's kind decides whose directives run. A work (or debug, architect) mission
runs the brief's own directives, as above. A review, repair or verify mission runs only the
lines addressed to it — "@review DIRECTIVE", "@repair DIRECTIVE", "@verify DIRECTIVE" — which
may sit in the quoted brief of the mission it is about ("> @review verdict minor rename it"), so
a work mission's brief can script how its reviewer and its repairer will behave. Without such
lines: a reviewer approves (@verdict approved), a verifier reports completed, and a repairer
runs @resolve, @commit and @done, whose summary says what it found: the files it resolved,
or that there were no conflicts and it changed nothing (a @done without text after @resolve
always says so). Quoted lines ("> @write …") never run as the brief's own.

Resuming: when agent.start carries a checkpoint {"step": N} the first N steps are skipped (the
agent logs "resuming from checkpoint: skipping steps 1-N already done"), except @heartbeat,
@ignore-sigterm and @deaf, which set state and are applied again.

Control: agent.ping is answered with agent.heartbeat {"message": "pong <seq>"}; agent.yield
(preemption) makes the agent stop at its next step boundary (a @sleep is interrupted) with
task.yield and the checkpoint {"step": <steps done>}, exit 0; agent.cancel
ends the run with worker.result cancelled and exit 0, SIGTERM with the same result and exit
143; EOF on stdin changes nothing. A script that runs to its end without a final directive
reports completed.
*/
package refagent
