#!/bin/sh
# mcp-scheduler pre-receive hook, version 1 (docs/workspaces.md, "Pushes into the checkout").
#
# A push into a checked-out branch (receive.denyCurrentBranch=updateInstead) rewrites the
# checkout's index and files to the pushed commit before git moves the branch with a
# compare-and-set. A landing of mcp-scheduler moving the branch in between made git refuse the
# push but leave the index staging the reverse of the landing, which the person's next commit
# would have committed. This hook takes the lock mcp-scheduler's landings into a checkout take
# (flock on <common git dir>/mcp-scheduler/checkout.lock), refuses the push if a pushed
# checked-out branch is no longer where the pusher saw it, and keeps the lock until
# git-receive-pack, its parent, exits: after the branch moved or the push failed.
#
# The pre-receive hook that was here before mcp-scheduler installed this one, if any, is
# pre-receive.before-mcp-scheduler next to it: it runs after these checks, with the same input,
# and its exit status is the push's. To remove this hook: delete this file and rename that one
# back.
set -u
input=$(cat)
chained="$(dirname "$0")/pre-receive.before-mcp-scheduler"
checked=" $(git worktree list --porcelain | sed -n 's/^branch //p' | tr '\n' ' ') "
hit=
while read -r old new ref; do
	case $checked in *" $ref "*) hit="$hit $ref:$old" ;; esac
done <<EOF
$input
EOF
if [ -n "$hit" ]; then
	if ! command -v flock >/dev/null 2>&1; then
		echo "mcp-scheduler: flock(1) is not installed: this push into a checked-out branch is not serialised with landings" >&2
	else
		common=$(git rev-parse --path-format=absolute --git-common-dir) || exit 1
		mkdir -p "$common/mcp-scheduler" && exec 9>>"$common/mcp-scheduler/checkout.lock" || exit 1
		if ! flock -w 600 9; then
			echo "mcp-scheduler: a landing into the checkout held its lock for 10 minutes; push again" >&2
			exit 1
		fi
		for h in $hit; do
			ref=${h%:*} old=${h##*:}
			now=$(git rev-parse -q --verify "$ref^{commit}") || now=0000000000000000000000000000000000000000
			if [ "$now" != "$old" ]; then
				echo "mcp-scheduler: $ref moved to $now after you fetched (a landing), so git would refuse this push after rewriting the checkout; nothing was changed: fetch, merge and push again" >&2
				exit 1
			fi
		done
		# Hold the lock until git-receive-pack exits: it moves the branch after this hook.
		rp=$PPID
		(while kill -0 "$rp" 2>/dev/null; do sleep 0.05; done) </dev/null >/dev/null 2>&1 &
	fi
fi
if [ -x "$chained" ]; then
	printf '%s\n' "$input" | "$chained" "$@"
	exit $?
fi
exit 0
