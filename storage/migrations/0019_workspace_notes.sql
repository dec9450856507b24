-- Schema 19 (issue 29, repository shapes): a workspace's notes, what it holds differently from
-- the person's checkout (Git LFS files left as pointers, submodules left empty and why), as a
-- JSON array of sentences ('' when none). get_mission shows them with the workspace; the
-- agent's brief repeats them.

ALTER TABLE workspaces ADD COLUMN notes TEXT NOT NULL DEFAULT '';
