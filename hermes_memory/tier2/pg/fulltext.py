"""Full-text search on PostgreSQL that answers as SQLite FTS5 does (``MATCH``, ``bm25()``), so the stores'
FTS5 SQL is rewritten mechanically (``pg.dialect``): ``FROM x_fts … WHERE x_fts MATCH ?`` reads
``FROM x_fts_match(?) AS x_fts``, ``bm25(x_fts)`` reads ``x_fts.bm``, ``x_fts.rowid`` stays.

The index of content table ``x`` (``fts_ddl``; ``x`` has an ``id BIGINT`` key and the text columns):
* ``x_fts_postings(term, rowid, tf, dl)``, key (term, rowid) INCLUDE (tf, dl): a row's distinct terms,
  ``tf`` summed over its columns, ``dl`` its token count, so ranking a term is one index-only scan (fast
  once autovacuum has set the visibility map: VACUUM after a bulk load); ``x_fts_docs(rowid, dl,
  terms)``: what each row put there (a delete does not re-tokenise).
* ``x_fts_stats(slot, n, len)``: row count and total tokens as 64 counters summed on read; a writer adds
  to the first slot no other transaction holds (``SKIP LOCKED``, its pid's first), so concurrent writers
  neither queue on one hot row nor deadlock (under REPEATABLE READ a slot another transaction committed
  to since the snapshot raises a serialization failure, retried as any write conflict there).
* Triggers: INSERT and DELETE per statement (transition tables), UPDATE of ``id`` or an indexed column per
  row (other columns cost nothing), TRUNCATE. ``x_fts_rebuild()`` re-indexes every row;
  ``x_fts_mismatch()`` (``index_mismatch``) compares the index with the rows, as FTS5's integrity check.

``x_fts_match(q) RETURNS TABLE(rowid bigint, bm double precision)``: every row matching ``q`` with FTS5's
bm25 (k1 = 1.2, b = 0.75, weights 1): per phrase idf = ln((N - n + 0.5) / (n + 0.5)), 1e-6 when <= 0;
tf over all columns, the row's length over all columns, avgdl = total / N; summed, negated. As in FTS5 a
phrase counts in a row only when its AND-group matched it (``"a" AND "b" OR "c"`` scores a row with a and
c by c alone), and a repeated phrase counts twice.

Grammar (all ``tier2.search`` builds): ``"phrase"`` (``""`` a quote inside) joined by ``AND`` / ``OR`` and
ASCII white space, AND binding tighter. A phrase is its text's tokens, adjacent, in order, in one column
("foo_bar" is foo bar); without tokens it matches nothing; with two or more, the rows holding them all are
re-tokenised (no positions are stored: rare, and slower). Anything else (bare words, ``*``, ``col:``,
NEAR, NOT, parentheses, implicit AND) raises SQLSTATE 42601 naming the expression (``parse_match``:
MatchSyntaxError).

Tokenizer (``TEXT_SEARCH_SETUP``, as ``porter unicode61``): lower-case (ICU); a Latin letter with one of
the 25 diacritics unicode61 removes loses it, a lone such mark goes; tokens are runs of letters and digits
(ICU's, plus the BMP's other numbers and private use): "Maya's" is maya s, "we'll" we ll, "e-mail" e mail,
"3.5" 3 5, a URL or address its words; no stop words; numbers kept; tokens of 3 to 64 bytes stemmed by
Porter (snowball's "porter" plus FTS5's departures: logi -> log, bli -> ble, any doubled consonant but
l s z undoubled before ed/ing, a two-byte letter never ends a consonant-vowel-consonant). PostgreSQL's
default parser is not used: it keeps hosts, e-mail addresses, URLs, paths, "3.5" and "-64" whole and
indexes "e-mail" thrice (e-mail, e, mail); no token-type mapping splits them as unicode61 does.
Remaining differences (pinned by tests/contract/test_pg_fulltext.py):
* Unicode versions: ICU knows characters SQLite's tables predate: a newer letter or case pair is a token
  or folded here, while a symbol SQLite does not know (emoji since Unicode 7, e.g. 🌮 🙂) is a token
  there; other numbers and private use outside the BMP separate tokens here.
* Porter on the non-words "eed", "ies", "sses" and on a doubled "y" before ed/ing.
* Without ICU in the server the database's LC_CTYPE says what a letter is (in a "C" database: ASCII).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Protocol

# The combining marks unicode61 (remove_diacritics=1) deletes; every other mark separates tokens.
_DIACRITICS = (
    0x300, 0x301, 0x302, 0x303, 0x304, 0x306, 0x307, 0x308, 0x309, 0x30A, 0x30B, 0x30C, 0x30F,
    0x311, 0x31B, 0x323, 0x324, 0x325, 0x326, 0x327, 0x328, 0x32D, 0x32E, 0x330, 0x331,
)
# BMP code points unicode61 keeps in tokens (categories No, Nl, Co) that ICU's [:alnum:] does not.
_EXTRA_TOKEN_CHARS = (
    "\u00b2-\u00b3\u00b9\u00bc-\u00be\u09f4-\u09f9\u0b72-\u0b77\u0bf0-\u0bf2\u0c78-\u0c7e\u0d58-\u0d5e"
    "\u0d70-\u0d78\u0f2a-\u0f33\u1369-\u137c\u16ee-\u16f0\u17f0-\u17f9\u19da\u2070\u2074-\u2079"
    "\u2080-\u2089\u2150-\u2182\u2185-\u2189\u2460-\u249b\u24ea-\u24ff\u2776-\u2793\u2cfd\u3007"
    "\u3021-\u3029\u3038-\u303a\u3192-\u3195\u3220-\u3229\u3248-\u324f\u3251-\u325f\u3280-\u3289"
    "\u32b1-\u32bf\ua6e6-\ua6ef\ua830-\ua835\ue000-\uf8ff"
)
# Lower-case letters unicode61 folds further (simple case folding, then its diacritics).
_CASE_FOLDS = {"µ": "μ", "ſ": "s", "ς": "σ", "ϐ": "β", "ϑ": "θ", "ϕ": "φ", "ϖ": "π", "ϰ": "κ", "ϱ": "ρ",
               "ϵ": "ε", "ẛ": "s", "\u1fbe": "ι"}  # fmt: skip
_LATIN = (*range(0xC0, 0x250), *range(0x1E00, 0x1F00))
STATS_SLOTS = 64
K1 = 1.2  # FTS5's bm25() defaults
B = 0.75


class MatchSyntaxError(ValueError):
    """A MATCH expression outside the grammar the stores build (see the module docstring)."""


_PHRASE = r'"(?:[^"]|"")*"'
_SPACE = r"[ \t\n\r\f\v]"  # ASCII white space: the same in Python and in PostgreSQL's regexes
MATCH_GRAMMAR = rf"^{_SPACE}*{_PHRASE}(?:{_SPACE}+(?:AND|OR){_SPACE}+{_PHRASE})*{_SPACE}*$"
_MATCH_RE = re.compile(MATCH_GRAMMAR)
_PART_RE = re.compile(r'"((?:[^"]|"")*)"|(AND|OR)')


def parse_match(expression: str) -> tuple[tuple[str, ...], ...]:
    """The phrases of an FTS5 MATCH expression as OR-ed groups of AND-ed phrase texts (unquoted, not
    tokenised), as ``x_fts_match`` reads it. Raises MatchSyntaxError naming an expression outside the
    grammar."""
    if not _MATCH_RE.match(expression):
        raise MatchSyntaxError(
            f"malformed full-text query {expression!r}: expected \"quoted terms\" joined by AND or OR"
        )
    groups: list[list[str]] = [[]]
    for phrase, operator in _PART_RE.findall(expression):
        if operator == "OR":
            groups.append([])
        elif not operator:
            groups[-1].append(phrase.replace('""', '"'))
    return tuple(tuple(g) for g in groups)


def _literal(text: str) -> str:
    """``text`` as an SQL string literal (standard_conforming_strings: only quotes are doubled)."""
    return "'" + text.replace("'", "''") + "'"


def _fold_table() -> tuple[str, str]:
    """translate() arguments that fold what unicode61 folds after lower-casing: a Latin letter with one
    of its diacritics to the bare letter, and the case-folding specials."""
    marks = {chr(c) for c in _DIACRITICS}
    source, target = [], []
    for code in _LATIN:
        char = chr(code)
        parts = unicodedata.normalize("NFD", char)
        if char == char.lower() and len(parts) == 2 and parts[0].isascii() and parts[1] in marks:
            source.append(char)
            target.append(parts[0])
    return "".join(source) + "".join(_CASE_FOLDS), "".join(target) + "".join(_CASE_FOLDS.values())


def _token_pattern() -> str:
    """The regular expression of one token: a run of alphanumerics."""
    return f"[[:alnum:]{_EXTRA_TOKEN_CHARS}]+"


# Once per database. The collation hm_fts_ctype says what a letter is and how case folds: ICU's root
# locale when the server has ICU, else the database's LC_CTYPE. In @-placeholders: SQL literals.
_SETUP = """
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_ts_dict WHERE dictname = 'hm_fts_porter'
                   AND dictnamespace = current_schema()::regnamespace) THEN
        CREATE TEXT SEARCH DICTIONARY hm_fts_porter (TEMPLATE = snowball, Language = porter);
    END IF;
    IF to_regcollation('hm_fts_ctype') IS NULL THEN
        IF EXISTS (SELECT 1 FROM pg_collation WHERE collprovider = 'i') THEN
            CREATE COLLATION hm_fts_ctype (provider = icu, locale = 'und');
        ELSE
            EXECUTE 'CREATE COLLATION hm_fts_ctype (provider = libc, locale = '
                || quote_literal(current_setting('lc_ctype')) || ')';
        END IF;
    END IF;
END $$;
CREATE OR REPLACE FUNCTION hm_fts_fold(t TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE WHEN octet_length(t) = length(t) THEN lower(t) ELSE regexp_replace(
    translate(lower(t COLLATE hm_fts_ctype), @SOURCE, @TARGET), @MARKS, '', 'g') END
$$;
CREATE OR REPLACE FUNCTION hm_fts_measure(s TEXT) RETURNS INTEGER LANGUAGE sql IMMUTABLE AS $$
SELECT regexp_count(regexp_replace(translate(s, 'aeiou', 'VVVVV'), '([^V])y', '\1V', 'g'), 'V+[^V]+')
$$;
CREATE OR REPLACE FUNCTION hm_fts_porter_fix(w TEXT, s TEXT) RETURNS TEXT LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    -- FTS5's Porter where snowball's differs: s is snowball's stem of the word w
    IF right(s, 4) = 'logi' AND hm_fts_measure(left(s, -4)) > 0 THEN
        RETURN left(s, -1);
    ELSIF right(s, 3) = 'bli' AND hm_fts_measure(left(s, -3)) > 0 THEN
        IF right(s, 4) = 'ibli' AND hm_fts_measure(left(s, -4)) > 1 THEN
            RETURN left(s, -4);
        END IF;
        RETURN left(s, -1);
    ELSIF right(s, 2) IN ('cc', 'hh', 'jj', 'kk', 'qq', 'vv', 'ww', 'xx')
          AND (starts_with(w, s || 'ed') OR starts_with(w, s || 'ing')) THEN
        RETURN left(s, -1);
    ELSIF right(s, 1) = 'e' AND octet_length(right(s, 2)) > 2 AND hm_fts_measure(left(s, -1)) = 1 THEN
        RETURN left(s, -1);  -- FTS5 reads bytes: a letter of two never ends a consonant-vowel-consonant
    END IF;
    RETURN s;
END $$;
CREATE OR REPLACE FUNCTION hm_fts_tokens(t TEXT) RETURNS TABLE(pos INTEGER, term TEXT)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
SELECT (w.o - 1)::INTEGER,
    CASE WHEN right(s.v, 2) IN ('gi', 'li', 'cc', 'hh', 'jj', 'kk', 'qq', 'vv', 'ww', 'xx')
        OR (right(s.v, 1) = 'e' AND octet_length(right(s.v, 2)) > 2)
    THEN hm_fts_porter_fix(w.m[1], s.v) ELSE s.v END
FROM regexp_matches(hm_fts_fold(t) COLLATE hm_fts_ctype, @TOKEN, 'g') WITH ORDINALITY AS w(m, o)
CROSS JOIN LATERAL (SELECT CASE WHEN octet_length(w.m[1]) NOT BETWEEN 3 AND 64 THEN w.m[1]
    ELSE coalesce((ts_lexize('hm_fts_porter', w.m[1]))[1], w.m[1]) END AS v OFFSET 0) AS s
$$;
CREATE OR REPLACE FUNCTION hm_fts_parse(q TEXT) RETURNS TABLE(phrase INTEGER, grp INTEGER, terms TEXT[])
LANGUAGE plpgsql STABLE AS $$
DECLARE
    part TEXT[];
BEGIN
    IF q IS NULL OR q !~ @GRAMMAR THEN
        RAISE EXCEPTION USING ERRCODE = '42601', MESSAGE = 'malformed full-text query '
            || coalesce(quote_literal(q), 'NULL') || ': expected "quoted terms" joined by AND or OR';
    END IF;
    phrase := 0;
    grp := 0;
    FOR part IN SELECT regexp_matches(q, @PART, 'g') LOOP
        IF part[2] = 'OR' THEN
            grp := grp + 1;
        ELSIF part[2] IS NULL THEN
            terms := ARRAY(SELECT k.term FROM hm_fts_tokens(replace(part[1], '""', '"')) AS k ORDER BY k.pos);
            RETURN NEXT;
            phrase := phrase + 1;
        END IF;
    END LOOP;
END $$;
"""


def _setup() -> str:
    source, target = _fold_table()
    values = {
        "@SOURCE": source,
        "@TARGET": target,
        "@MARKS": "[" + "".join(chr(c) for c in _DIACRITICS) + "]",
        "@TOKEN": _token_pattern(),
        "@GRAMMAR": MATCH_GRAMMAR,
        "@PART": _PART_RE.pattern,
    }
    sql = _SETUP
    for key, value in values.items():
        sql = sql.replace(key, _literal(value))
    return sql


TEXT_SEARCH_SETUP: str = _setup()

# Per content table; <T> is the table, the other <…> are filled by ``fts_ddl``.
_TABLE = """
CREATE TABLE IF NOT EXISTS <T>_fts_postings (
    term TEXT COLLATE "C" NOT NULL,
    rowid BIGINT NOT NULL,
    tf INTEGER NOT NULL,
    dl INTEGER NOT NULL,
    PRIMARY KEY (term, rowid) INCLUDE (tf, dl)
);
CREATE TABLE IF NOT EXISTS <T>_fts_docs (
    rowid BIGINT PRIMARY KEY,
    dl INTEGER NOT NULL,
    terms TEXT[] COLLATE "C" NOT NULL
);
CREATE TABLE IF NOT EXISTS <T>_fts_stats (
    slot INTEGER PRIMARY KEY,
    n BIGINT NOT NULL,
    len BIGINT NOT NULL
);
INSERT INTO <T>_fts_stats (slot, n, len) SELECT s, 0, 0 FROM generate_series(0, <SLOTS> - 1) AS s
ON CONFLICT (slot) DO NOTHING;
CREATE OR REPLACE FUNCTION <T>_fts_bump(dn BIGINT, dlen BIGINT) RETURNS VOID LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    own INTEGER := mod(pg_backend_pid(), <SLOTS>);
    chosen INTEGER;
BEGIN
    IF dn = 0 AND dlen = 0 THEN
        RETURN;
    END IF;
    SELECT s.slot INTO chosen FROM <T>_fts_stats AS s ORDER BY s.slot = own DESC, s.slot
    LIMIT 1 FOR UPDATE SKIP LOCKED;
    UPDATE <T>_fts_stats SET n = n + dn, len = len + dlen WHERE slot = coalesce(chosen, own);
END $$;
CREATE OR REPLACE FUNCTION <T>_fts_add(ids BIGINT[], <ARRAYS>) RETURNS VOID LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    dn BIGINT;
    dlen BIGINT;
BEGIN
    WITH r AS (
        SELECT * FROM unnest(ids, <NAMES>) AS r(id, <NAMES>)
    ), <INDEXED>, added AS (
        INSERT INTO <T>_fts_postings (term, rowid, tf, dl)
        SELECT p.term, p.id, p.tf, d.dl FROM p JOIN d ON d.id = p.id
    ), docs AS (
        INSERT INTO <T>_fts_docs (rowid, dl, terms) SELECT d.id, d.dl, d.terms FROM d
    )
    SELECT count(*), coalesce(sum(d.dl), 0) INTO dn, dlen FROM d;
    PERFORM <T>_fts_bump(dn, dlen);
END $$;
CREATE OR REPLACE FUNCTION <T>_fts_remove(ids BIGINT[]) RETURNS VOID LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    dn BIGINT;
    dlen BIGINT;
BEGIN
    WITH d AS (
        DELETE FROM <T>_fts_docs WHERE rowid = ANY(ids) RETURNING rowid, dl, terms
    ), removed AS (
        DELETE FROM <T>_fts_postings AS p USING (SELECT d.rowid, unnest(d.terms) AS term FROM d) AS z
        WHERE p.term = z.term AND p.rowid = z.rowid
    )
    SELECT count(*), coalesce(sum(d.dl), 0) INTO dn, dlen FROM d;
    PERFORM <T>_fts_bump(-dn, -dlen);
END $$;
CREATE OR REPLACE FUNCTION <T>_fts_clear() RETURNS VOID LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE <T>_fts_postings, <T>_fts_docs;
    UPDATE <T>_fts_stats SET n = 0, len = 0;
END $$;
CREATE OR REPLACE FUNCTION <T>_fts_mismatch() RETURNS TEXT LANGUAGE plpgsql AS $$
DECLARE
    postings BIGINT;
    docs BIGINT;
    counters BOOLEAN;
BEGIN
    WITH r AS (
        SELECT id, <CASTS> FROM <T>
    ), <INDEXED>, want AS (
        SELECT p.term, p.id, p.tf, d.dl, d.terms FROM p JOIN d ON d.id = p.id
    ), have AS (
        SELECT p.term, p.rowid, p.tf, p.dl, d.terms
        FROM <T>_fts_postings AS p JOIN <T>_fts_docs AS d USING (rowid)
    )
    SELECT (SELECT count(*) FROM ((SELECT * FROM want EXCEPT SELECT * FROM have)
            UNION ALL (SELECT * FROM have EXCEPT SELECT * FROM want)) AS x),
        (SELECT count(*) FROM ((SELECT id, dl FROM d EXCEPT SELECT rowid, dl FROM <T>_fts_docs)
            UNION ALL (SELECT rowid, dl FROM <T>_fts_docs EXCEPT SELECT id, dl FROM d)) AS y)
    INTO postings, docs;
    SELECT s.n IS NOT DISTINCT FROM d.n AND s.len IS NOT DISTINCT FROM d.len INTO counters
    FROM (SELECT sum(n) AS n, sum(len) AS len FROM <T>_fts_stats) AS s,
        (SELECT count(*) AS n, coalesce(sum(dl), 0) AS len FROM <T>_fts_docs) AS d;
    IF postings = 0 AND docs = 0 AND counters THEN
        RETURN NULL;
    END IF;
    RETURN concat_ws('; ', CASE WHEN postings > 0 THEN postings || ' postings differ from the rows' END,
        CASE WHEN docs > 0 THEN docs || ' rows indexed wrongly or not at all' END,
        CASE WHEN NOT counters THEN 'the row count or total length is off' END);
END $$;
CREATE OR REPLACE FUNCTION <T>_fts_rebuild() RETURNS VOID LANGUAGE plpgsql AS $$
BEGIN
    PERFORM <T>_fts_clear();
    PERFORM <T>_fts_add(array_agg(id), <AGGS>) FROM <T> HAVING count(*) > 0;
END $$;
CREATE OR REPLACE FUNCTION <T>_fts_sync() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM <T>_fts_add(array_agg(id), <AGGS>) FROM fts_new HAVING count(*) > 0;
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM <T>_fts_remove(array_agg(id)) FROM fts_old HAVING count(*) > 0;
    ELSIF TG_OP = 'UPDATE' THEN
        PERFORM <T>_fts_remove(ARRAY[OLD.id]);
        PERFORM <T>_fts_add(ARRAY[NEW.id], <NEWS>);
    ELSE
        PERFORM <T>_fts_clear();
    END IF;
    RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER <T>_fts_ai AFTER INSERT ON <T> REFERENCING NEW TABLE AS fts_new
    FOR EACH STATEMENT EXECUTE FUNCTION <T>_fts_sync();
CREATE OR REPLACE TRIGGER <T>_fts_ad AFTER DELETE ON <T> REFERENCING OLD TABLE AS fts_old
    FOR EACH STATEMENT EXECUTE FUNCTION <T>_fts_sync();
CREATE OR REPLACE TRIGGER <T>_fts_au AFTER UPDATE OF id, <COLUMNS> ON <T> FOR EACH ROW
    WHEN (OLD.id IS DISTINCT FROM NEW.id OR <CHANGED>) EXECUTE FUNCTION <T>_fts_sync();
CREATE OR REPLACE TRIGGER <T>_fts_at AFTER TRUNCATE ON <T> FOR EACH STATEMENT EXECUTE FUNCTION <T>_fts_sync();
CREATE OR REPLACE FUNCTION <T>_fts_match(q TEXT) RETURNS TABLE(rowid BIGINT, bm DOUBLE PRECISION)
LANGUAGE plpgsql STABLE SET jit = off SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
    simple BOOLEAN;
    singles TEXT[];
    distinct_terms INTEGER;
BEGIN
    SELECT bool_and(cardinality(ph.terms) = 1) AND count(*) = count(DISTINCT ph.grp), array_agg(ph.terms[1]),
        count(DISTINCT ph.terms[1]) INTO simple, singles, distinct_terms FROM hm_fts_parse(q) AS ph;
    IF simple AND distinct_terms = 1 THEN
        RETURN QUERY <ONE>;
    ELSIF simple THEN
        RETURN QUERY <ANY>;
    ELSE
        RETURN QUERY <GENERAL>;
    END IF;
END $$;
"""
# What the rows r(id, c0, c1, …) put in the index: p(id, term, tf) and d(id, dl, terms) (every row).
_INDEXED = """p AS (
        SELECT r.id, k.term COLLATE "C" AS term, count(*)::INTEGER AS tf
        FROM r CROSS JOIN LATERAL (<TOKENS>) AS k GROUP BY r.id, k.term
    ), d AS (
        SELECT r.id, coalesce(sum(p.tf), 0)::INTEGER AS dl,
            coalesce(array_agg(p.term ORDER BY p.term) FILTER (WHERE p.term IS NOT NULL), '{}') AS terms
        FROM r LEFT JOIN p ON p.id = r.id GROUP BY r.id
    )"""
_STATS = """st AS MATERIALIZED (
        SELECT sum(s.n)::DOUBLE PRECISION AS n, sum(s.len)::DOUBLE PRECISION / nullif(sum(s.n), 0) AS avgdl
        FROM <T>_fts_stats AS s
    )"""
# One-token phrases OR-ed: every posting of their tokens matches. k: how often the query repeats a token.
_SIMPLE = """
    WITH <STATS>, w AS MATERIALIZED (
        SELECT u.term, count(*) AS k FROM unnest(singles) AS u(term) GROUP BY u.term
    ), idf AS MATERIALIZED (
        SELECT w.term, w.k, CASE WHEN x.v <= 0 THEN 1e-6 ELSE x.v END AS v
        FROM w CROSS JOIN st
        CROSS JOIN LATERAL (SELECT count(*) AS n FROM <T>_fts_postings AS p WHERE p.term = w.term) AS c
        CROSS JOIN LATERAL (SELECT ln((st.n - c.n + 0.5) / (c.n + 0.5)) AS v) AS x WHERE c.n > 0
    )
    SELECT h.rowid, -<SUM>(idf.k * (idf.v * <SCORE>))
    FROM idf CROSS JOIN st CROSS JOIN LATERAL (
        SELECT p.rowid, p.tf, p.dl FROM <T>_fts_postings AS p WHERE p.term = idf.term
    ) AS h<GROUP>"""
# Any expression: hits per phrase (a phrase of several tokens re-tokenises the rows holding them all),
# a row's AND-groups that matched, the phrases of those summed.
_GENERAL = """
    WITH ph AS MATERIALIZED (
        SELECT * FROM hm_fts_parse(q)
    ), hit AS MATERIALIZED (
        SELECT ph.phrase, p.rowid, p.tf, p.dl FROM ph CROSS JOIN LATERAL (
            SELECT p.rowid, p.tf, p.dl FROM <T>_fts_postings AS p WHERE p.term = ph.terms[1]
        ) AS p WHERE cardinality(ph.terms) = 1
        UNION ALL
        SELECT ph.phrase, c.rowid, x.tf, c.dl FROM ph CROSS JOIN LATERAL (
            SELECT p.rowid, min(p.dl) AS dl FROM <T>_fts_postings AS p WHERE p.term = ANY(ph.terms)
            GROUP BY p.rowid HAVING count(*) = (SELECT count(DISTINCT u.t) FROM unnest(ph.terms) AS u(t))
        ) AS c CROSS JOIN LATERAL (
            SELECT count(*)::INTEGER AS tf FROM <T> AS src
            CROSS JOIN LATERAL (VALUES <PHRASE_ARRAYS>) AS v(a)
            CROSS JOIN generate_subscripts(v.a, 1) AS i(at)
            WHERE src.id = c.rowid AND v.a[i.at : i.at + cardinality(ph.terms) - 1] = ph.terms
        ) AS x WHERE cardinality(ph.terms) > 1 AND x.tf > 0
    ), <STATS>, w AS MATERIALIZED (
        SELECT ph.phrase, ph.grp, count(*) OVER (PARTITION BY ph.grp) AS need,
            CASE WHEN x.v <= 0 THEN 1e-6 ELSE x.v END AS idf
        FROM ph CROSS JOIN st LEFT JOIN (SELECT h.phrase, count(*) AS n FROM hit AS h GROUP BY h.phrase) AS df
            ON df.phrase = ph.phrase
        CROSS JOIN LATERAL (SELECT ln((st.n - coalesce(df.n, 0) + 0.5) / (coalesce(df.n, 0) + 0.5)) AS v) AS x
    )
    SELECT g.rowid, -sum(g.score) FROM (
        SELECT h.rowid, sum(w.idf * <SCORE>) AS score, count(*) AS got, min(w.need) AS need
        FROM hit AS h JOIN w ON w.phrase = h.phrase CROSS JOIN st GROUP BY h.rowid, w.grp
    ) AS g WHERE g.got = g.need GROUP BY g.rowid"""
_K1 = f"{K1!r}::DOUBLE PRECISION"
_B = f"{B!r}::DOUBLE PRECISION"
# FTS5's term of one phrase in a row, in its order of operations (h: the row's posting, st: the stats).
_SCORE = f"((h.tf * ({_K1} + 1.0)) / (h.tf + {_K1} * (1.0 - {_B} + {_B} * h.dl / st.avgdl)))"
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]*$")


def fts_ddl(table: str, columns: tuple[str, ...]) -> str:
    """The DDL of ``table``'s full-text index over ``columns`` (text, NULL allowed; ``table`` has an
    ``id BIGINT`` key): the postings, docs and stats tables, the triggers that keep them in step,
    ``{table}_fts_match(q)`` and ``{table}_fts_rebuild()``. Idempotent; needs ``TEXT_SEARCH_SETUP`` run
    first. Raises ValueError for a name that is not a plain lower-case identifier."""
    for name in (table, *columns):
        if not _IDENTIFIER.match(name) or name == "id":
            raise ValueError(f"not a plain identifier for a full-text index: {name!r}")
    if not columns:
        raise ValueError(f"a full-text index of {table} needs a column")
    names = [f"c{i}" for i in range(len(columns))]
    values = {  # in this order: a value may hold the keys after it
        "<ONE>": _SIMPLE.replace("<SUM>", "").replace("<GROUP>", ""),
        "<ANY>": _SIMPLE.replace("<SUM>", "sum").replace("<GROUP>", " GROUP BY h.rowid"),
        "<GENERAL>": _GENERAL,
        "<INDEXED>": _INDEXED,
        "<CASTS>": ", ".join(f"{c}::TEXT AS {n}" for c, n in zip(columns, names, strict=True)),
        "<STATS>": _STATS,
        "<SCORE>": _SCORE,
        "<ARRAYS>": ", ".join(f"{n} TEXT[]" for n in names),
        "<NAMES>": ", ".join(names),
        "<TOKENS>": " UNION ALL ".join(f"SELECT t.term FROM hm_fts_tokens(r.{n}) AS t" for n in names),
        "<AGGS>": ", ".join(f"array_agg({c}::TEXT)" for c in columns),
        "<NEWS>": ", ".join(f"ARRAY[NEW.{c}::TEXT]" for c in columns),
        "<PHRASE_ARRAYS>": ", ".join(
            f"(ARRAY(SELECT k.term FROM hm_fts_tokens(src.{c}::TEXT) AS k ORDER BY k.pos))" for c in columns
        ),
        "<COLUMNS>": ", ".join(columns),
        "<CHANGED>": " OR ".join(f"OLD.{c} IS DISTINCT FROM NEW.{c}" for c in columns),
        "<SLOTS>": str(STATS_SLOTS),
        "<T>": table,
    }
    ddl = _TABLE
    for key, value in values.items():
        ddl = ddl.replace(key, value)
    return ddl


class _Queries(Protocol):
    """What ``index_mismatch`` reads the database through (``tier2.pg.database``'s ``query_one``)."""

    def query_one(self, sql: str) -> Any: ...


def index_mismatch(db: _Queries, table: str) -> str | None:
    """What differs between ``table`` and its full-text index (``{table}_fts_mismatch()``: every row
    re-tokenised, so it reads the whole table), or None when they agree: FTS5's integrity check."""
    if not _IDENTIFIER.match(table):
        raise ValueError(f"not a plain identifier for a full-text index: {table!r}")
    row = db.query_one(f"SELECT {table}_fts_mismatch()")
    return None if row is None or row[0] is None else str(row[0])


__all__ = [
    "K1",
    "MATCH_GRAMMAR",
    "STATS_SLOTS",
    "TEXT_SEARCH_SETUP",
    "B",
    "MatchSyntaxError",
    "fts_ddl",
    "index_mismatch",
    "parse_match",
]
