-- Schema 15: token limits of missions and voyages (issue 15), input plus output tokens as the
-- profiles' daily caps count them; 0 is no limit. A mission's is read apart from its row
-- (MissionTokenLimitGet), so the lease statements do not carry it; a voyage's is part of its row.

ALTER TABLE missions ADD COLUMN token_limit INTEGER NOT NULL DEFAULT 0;
ALTER TABLE voyages ADD COLUMN token_limit INTEGER NOT NULL DEFAULT 0;
