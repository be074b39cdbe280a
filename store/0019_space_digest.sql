-- The identity of the keys a sweep's space makes (lua/space.lua, Space:digest): ft.digest over
-- the canonical form's version and each searched parameter's JSON key, kind and canonical
-- values or bounds, written when the sweep is created. A resume whose space, made again from
-- the stored experiment text by the flagtune that runs it, has the same digest takes each
-- stored `config` as the key its seen set holds, with no decode (docs/COST.md, resume); NULL
-- (a sweep created before schema 19) or a different digest: it decodes each configuration.
ALTER TABLE sweeps ADD COLUMN space_digest TEXT;
