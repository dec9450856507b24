-- Schema 8 (issue 13 item 4): an attempt's workspace (path, branch, base commit, strategy,
-- read-only, resumed, state) is a row of workspaces, written in the transaction that records
-- the attempt's launch, instead of a part of the scheduler's run record in missions.run. The
-- table existed since schema 1 but was never written; it gains the fields the run record
-- carried besides (the two flags, the workspace manager's repository id, the branch the
-- workspace was made from). Rows written before are carried over from the run records (the current attempt's
-- workspace: earlier attempts' were overwritten there), and the run records lose the copy.
ALTER TABLE workspaces ADD COLUMN read_only INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workspaces ADD COLUMN resumed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workspaces ADD COLUMN repo_id TEXT NOT NULL DEFAULT '';
ALTER TABLE workspaces ADD COLUMN target_branch TEXT NOT NULL DEFAULT '';
-- A managed or pull run record names it "worktree"; a claim without a preparer's record
-- names it "workspace".
INSERT OR IGNORE INTO workspaces (mission_id, attempt, path, branch, base_commit, strategy, read_only, resumed,
  repo_id, target_branch, state, created_at)
SELECT id, coalesce(json_extract(run, '$.attempt'), attempt), json_extract(run, w || '.path'),
       coalesce(json_extract(run, w || '.branch'), ''), coalesce(json_extract(run, w || '.base_commit'), ''),
       coalesce(json_extract(run, w || '.strategy'), ''), coalesce(json_extract(run, w || '.read_only'), 0),
       coalesce(json_extract(run, w || '.resumed'), 0), coalesce(json_extract(run, w || '.repo_id'), ''),
       coalesce(json_extract(run, w || '.target_branch'), ''), 'active', coalesce(started_at, updated_at)
  FROM (SELECT id, attempt, run, started_at, updated_at,
               CASE WHEN json_extract(run, '$.worktree.path') IS NOT NULL THEN '$.worktree' ELSE '$.workspace' END AS w
          FROM missions WHERE run IS NOT NULL AND json_valid(run))
 WHERE coalesce(json_extract(run, w || '.path'), '') <> '';
UPDATE missions SET run = json_remove(run, '$.worktree', '$.workspace')
 WHERE run IS NOT NULL AND json_valid(run) AND (json_type(run, '$.worktree') IS NOT NULL OR json_type(run, '$.workspace') IS NOT NULL);
