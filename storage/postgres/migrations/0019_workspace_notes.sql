-- Schema 19 (issue 29, repository shapes), as SQLite's 0019_workspace_notes.sql: a
-- workspace's notes (Git LFS files left as pointers, submodules left empty and why), a JSON
-- array of sentences ('' when none).

ALTER TABLE workspaces ADD COLUMN notes TEXT NOT NULL DEFAULT '';
