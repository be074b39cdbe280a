/* flagtune-embed: writes build/embed_data.c, every file of lua/, search/ and store/ as a byte
 * array keyed by its path relative to the source root ("lua/dsl.lua", "store/0001_init.sql").
 * A .lua file is compiled here, at build time, with the same Lua library the program links, and
 * embedded as its lua_dump (debug info kept: an error still says "lua/dsl.lua:12:"), so a start
 * of flagtune does not parse ~250 KB of Lua source. A syntax error in an embedded file fails the
 * build with that file's path and line. Other files are embedded as they are.
 * lua/catalog.lua (the flag catalog, a third of all the bytecode) is embedded whole and also
 * split, so that a start loads only the entries it names (lua/catindex.lua): each entry
 * compiled on its own ("lua/catalog.entries", the chunks end to end) and an index of them
 * ("lua/catalog_index.lua", one string: a line "NAME KIND OFFSET LENGTH" per entry in the
 * catalog's order, KIND t for a TPU flag, f another flag, v a variable). The split cuts the file at
 * the lines that start an entry (`  { name = "`) and checks every piece against the entry the whole
 * file gives; a catalog whose layout breaks that fails the build. Usage: flagtune-embed OUT ROOT
 * FILE...   (FILE under ROOT; OUT is written only when it changes) Built for the host only; owns
 * nothing at run time. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolbuf.h"

static int dump_writer(lua_State *L, const void *p, size_t n, void *ud) {
  (void)L;
  return buf_add(ud, p, n);
}

static int ends_with(const char *s, const char *tail) {
  size_t a = strlen(s), b = strlen(tail);
  return a >= b && strcmp(s + a - b, tail) == 0;
}

/* ---- a Lua 5.4 dump without its local variables' and upvalues' names ----
 * lua_dump keeps all debug info or none. Line info is what an error needs ("lua/x.lua:12:"),
 * the local variables' and upvalues' names (a string each, interned again at every start)
 * only what a runtime error message in flagtune's own code would add ("(local 'x')",
 * "(upvalue 'x')") and debuggers; the local names were a third of loading the bytecode
 * `check` runs, the upvalue names 0.12 M of its 4.07 M instructions. So the dump is copied
 * here with every function's local variable list empty and every upvalue name NULL but
 * "_ENV", which ldebug.c's isEnv reads to say "global 'x'" rather than "field 'x'"; lines
 * stay. The format is lundump.c's of Lua 5.4 (the library this tool is built with); a dump
 * that does not parse as that, or does not load back, is embedded as it was. */

typedef struct {
  const unsigned char *p;
  size_t n, at;
  int bad;
} reader;

static int rd_byte(reader *r) {
  if (r->at >= r->n) {
    r->bad = 1;
    return 0x80;
  }
  return r->p[r->at++];
}

/* lundump.c's loadSize: 7 bits a byte, most significant first, the last byte's top bit set. */
static size_t rd_size(reader *r) {
  size_t x = 0;
  int b;
  do {
    b = rd_byte(r);
    if (x >> (sizeof x * 8 - 8)) r->bad = 1;
    x = (x << 7) | (size_t)(b & 0x7f);
  } while (!(b & 0x80) && !r->bad);
  return x;
}

static void rd_skip(reader *r, size_t k) {
  if (k > r->n - r->at)
    r->bad = 1;
  else
    r->at += k;
}

static void skip_string(reader *r) {
  size_t len = rd_size(r);
  if (len > 0) rd_skip(r, len - 1);
}

/* Copies the bytes read since FROM. */
static void copy_since(const reader *r, size_t from, buf *out) {
  if (!r->bad) buf_add(out, r->p + from, r->at - from);
}

static void write_size(buf *out, size_t x) {
  unsigned char b[16];
  int n = 0;
  do {
    b[15 - n++] = x & 0x7f;
    x >>= 7;
  } while (x);
  b[15] |= 0x80;
  buf_add(out, b + 16 - n, (size_t)n);
}

static void copy_function(reader *r, buf *out, int depth) {
  if (depth > 200) r->bad = 1;
  size_t from = r->at;
  skip_string(r); /* source */
  rd_size(r);     /* linedefined */
  rd_size(r);     /* lastlinedefined */
  rd_skip(r, 3);  /* numparams, is_vararg, maxstacksize */
  size_t ncode = rd_size(r);
  if (ncode > r->n / 4)
    r->bad = 1;
  else
    rd_skip(r, ncode * 4); /* instructions */
  size_t nk = rd_size(r);
  for (size_t i = 0; i < nk && !r->bad; i++) {
    int tag = rd_byte(r);
    if (tag == 3 || tag == 19)
      rd_skip(r, 8); /* an integer, a float */
    else if (tag == 4 || tag == 20)
      skip_string(r);
    else if (tag != 0 && tag != 1 && tag != 17)
      r->bad = 1; /* nil, false, true */
  }
  size_t nup = rd_size(r);
  if (nup > r->n / 3)
    r->bad = 1;
  else
    rd_skip(r, nup * 3); /* instack, idx, kind */
  size_t np = rd_size(r);
  copy_since(r, from, out); /* ... the number of nested functions included */
  for (size_t i = 0; i < np && !r->bad; i++) copy_function(r, out, depth + 1);
  from = r->at;
  size_t nline = rd_size(r);
  rd_skip(r, nline); /* lineinfo: a byte per instruction */
  size_t nabs = rd_size(r);
  for (size_t i = 0; i < nabs && !r->bad; i++) {
    rd_size(r); /* pc */
    rd_size(r); /* line */
  }
  copy_since(r, from, out);
  size_t nloc = rd_size(r);
  for (size_t i = 0; i < nloc && !r->bad; i++) {
    skip_string(r);
    rd_size(r); /* startpc */
    rd_size(r); /* endpc */
  }
  write_size(out, 0); /* no local variable names */
  /* loadDebug fills the upvalues' names by index and leaves those past the count NULL
   * (loadUpvalues set them so), so the names end at the last _ENV: a NULL name costs the
   * load a loadStringN call (338 of them in the modules `check` runs). */
  size_t nupname = rd_size(r), names_at = r->at, keep = 0;
  for (size_t i = 0; i < nupname && !r->bad; i++) {
    size_t len = rd_size(r);
    if (len > 0) rd_skip(r, len - 1);
    if (len == 5 && !r->bad && memcmp(r->p + r->at - 4, "_ENV", 4) == 0) keep = i + 1;
  }
  r->at = names_at;
  write_size(out, keep);
  for (size_t i = 0; i < nupname && !r->bad; i++) {
    from = r->at;
    size_t len = rd_size(r);
    if (len > 0) rd_skip(r, len - 1);
    if (i >= keep) continue;
    if (len == 5 && !r->bad && memcmp(r->p + r->at - 4, "_ENV", 4) == 0)
      copy_since(r, from, out);
    else
      write_size(out, 0); /* a NULL name */
  }
}

/* DUMP (lua_dump of a whole chunk) without local variable and upvalue names (_ENV's kept) in
 * OUT; 0, or -1 when DUMP is not the format this code reads. */
static int drop_names(const buf *dump, buf *out) {
  enum { HEADER = 4 + 1 + 1 + 6 + 3 + 8 + 8 + 1 }; /* lundump.c checkHeader, then nupvalues */
  reader r = {dump->p, dump->len, 0, 0};
  if (dump->len < HEADER || memcmp(dump->p, LUA_SIGNATURE, 4) != 0 || dump->p[4] != 0x54) return -1;
  r.at = HEADER;
  buf_add(out, dump->p, HEADER);
  copy_function(&r, out, 0);
  return r.bad || r.at != r.n ? -1 : 0;
}

/* SRC (a .lua file's text, named REL) compiled to bytecode in OUT; 0, or -1 with the compiler's
 * message ("lua/x.lua:12: ...") on stderr. */
static int compile_lua(const char *rel, const buf *src, buf *out) {
  lua_State *L = luaL_newstate();
  if (!L) return -1;
  char name[1024];
  snprintf(name, sizeof name, "@%s", rel);
  int rc = -1;
  buf full = {0}, slim = {0};
  if (luaL_loadbufferx(L, (const char *)src->p, src->len, name, "t") != LUA_OK) {
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
  } else if (lua_dump(L, dump_writer, &full, 0) != 0) {
    fprintf(stderr, "flagtune-embed: %s: out of memory\n", rel);
  } else {
    rc = 0;
    int slim_ok = drop_names(&full, &slim) == 0 &&
                  luaL_loadbufferx(L, (const char *)slim.p, slim.len, name, "b") == LUA_OK;
    if (!slim_ok)
      fprintf(stderr,
              "flagtune-embed: %s: embedded with its local variable and upvalue names (not a "
              "Lua 5.4 dump this tool reads)\n",
              rel);
    const buf *use = slim_ok ? &slim : &full;
    if (buf_add(out, use->p, use->len) != 0) rc = -1;
  }
  free(full.p);
  free(slim.p);
  lua_close(L);
  return rc;
}

static void emit_array(buf *c, int i, const buf *data) {
  char id[32];
  snprintf(id, sizeof id, "f%d", i);
  emit_named_array(c, id, data);
}

/* Splits the catalog (the text in ...) into the index's bytecode and the entries' chunks;
 * raises "lua/catalog.lua: what is wrong" when a piece does not give its entry back. */
static const char *SPLIT_CATALOG =
    "local src = ...\n"
    "local function fail(msg)\n"
    "  error('lua/catalog.lua: ' .. msg .. ' (tools/embed.c splits the catalog at the lines '\n"
    "    .. 'that start an entry, \"  { name = \"...)', 0)\n"
    "end\n"
    "local cat = assert(load(src, '@lua/catalog.lua', 't'))()\n"
    "local starts, at = {}, 1\n"
    "while true do\n"
    "  local s = src:find('\\n  { name = \"', at, true)\n"
    "  if not s then break end\n"
    "  starts[#starts + 1], at = s + 1, s + 1\n"
    "end\n"
    "local close = src:match('()\\n}%s*$')\n"
    "if not close then fail('does not end with the brace that closes its table') end\n"
    "if #starts ~= #cat then\n"
    "  fail(string.format('%d entries, but %d lines start one', #cat, #starts))\n"
    "end\n"
    "local function same(a, b)\n"
    "  if type(a) ~= type(b) or math.type(a) ~= math.type(b) then return false end\n"
    "  if type(a) ~= 'table' then return a == b end\n"
    "  for k, v in pairs(a) do if not same(v, b[k]) then return false end end\n"
    "  for k in pairs(b) do if a[k] == nil then return false end end\n"
    "  return true\n"
    "end\n"
    "local chunks, lines, pos, at = {}, {}, {}, 0\n"
    "for i, e in ipairs(cat) do\n"
    "  local text = src:sub(starts[i], (starts[i + 1] or close + 1) - 1)\n"
    "  local f, err = load('return {\\n' .. text .. '\\n}', '=lua/catalog.lua', 't')\n"
    "  local got = f and f()\n"
    "  if not got or #got ~= 1 or not same(got[1], e) then\n"
    "    fail(string.format('entry %d (%s) is not the same on its own%s', i, tostring(e.name),\n"
    "      err and (': ' .. err) or ''))\n"
    "  end\n"
    "  if type(e.name) ~= 'string' or not e.name:find('^[%w_]+$') or pos[e.name] then\n"
    "    fail(string.format('entry %d: a name missing, not a word or given twice', i))\n"
    "  end\n"
    "  chunks[i], pos[e.name] = string.dump(f, true), i\n"
    "  local kind = e.kind ~= 'flag' and 'v' or e.backend == 'tpu' and 't' or 'f'\n"
    "  lines[i] = string.format('%s %s %d %d', e.name, kind, at, #chunks[i])\n"
    "  at = at + #chunks[i]\n"
    "end\n"
    "local index = string.format('return %q', '\\n' .. table.concat(lines, '\\n') .. '\\n')\n"
    "local f = assert(load(index, '=lua/catalog_index.lua', 't'))\n"
    "return string.dump(f, true), table.concat(chunks)\n";

/* The catalog's text SRC split: INDEX and ENTRIES as SPLIT_CATALOG makes them; 0, or -1 with
 * the reason on stderr. */
static int split_catalog(const buf *src, buf *index, buf *entries) {
  lua_State *L = luaL_newstate();
  if (!L) return -1;
  luaL_openlibs(L);
  int rc = -1;
  if (luaL_loadstring(L, SPLIT_CATALOG) != LUA_OK ||
      (lua_pushlstring(L, (const char *)src->p, src->len), lua_pcall(L, 1, 2, 0) != LUA_OK)) {
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
  } else {
    size_t n1, n2;
    const char *a = lua_tolstring(L, -2, &n1), *b = lua_tolstring(L, -1, &n2);
    if (buf_add(index, a, n1) == 0 && buf_add(entries, b, n2) == 0) rc = 0;
  }
  lua_close(L);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: flagtune-embed OUT ROOT FILE...\n");
    return 2;
  }
  const char *out = argv[1], *root = argv[2];
  size_t rootlen = strlen(root);
  buf c = {0}, table = {0};
  const char *head =
      "/* Generated by tools/embed.c: do not edit. */\n#include <stddef.h>\n"
      "#include \"embed.h\"\n";
  buf_add(&c, head, strlen(head));
  int rc = 0;
  for (int i = 3; i < argc && rc == 0; i++) {
    const char *path = argv[i];
    if (strncmp(path, root, rootlen) != 0 || path[rootlen] != '/') {
      fprintf(stderr, "flagtune-embed: %s is not under %s\n", path, root);
      rc = 1;
      break;
    }
    const char *rel = path + rootlen + 1;
    buf src = {0}, code = {0};
    if (read_file(path, &src) != 0) {
      perror(path);
      rc = 1;
    } else if (ends_with(rel, ".lua")) {
      if (compile_lua(rel, &src, &code) != 0) rc = 1;
    } else {
      code = src;
      src = (buf){0};
    }
    if (rc == 0) {
      emit_array(&c, i - 3, &code);
      char row[1200];
      int n =
          snprintf(row, sizeof row, "  {\"%s\", (const char *)f%d, %zu},\n", rel, i - 3, code.len);
      buf_add(&table, row, (size_t)n);
    }
    if (rc == 0 && strcmp(rel, "lua/catalog.lua") == 0) {
      buf index = {0}, entries = {0};
      if (split_catalog(&src, &index, &entries) != 0) {
        rc = 1;
      } else {
        const buf *part[2] = {&index, &entries};
        const char *name[2] = {"lua/catalog_index.lua", "lua/catalog.entries"};
        for (int k = 0; k < 2; k++) {
          char id[32], row[256];
          snprintf(id, sizeof id, "c%d", k);
          emit_named_array(&c, id, part[k]);
          int n = snprintf(row, sizeof row, "  {\"%s\", (const char *)%s, %zu},\n", name[k], id,
                           part[k]->len);
          buf_add(&table, row, (size_t)n);
        }
      }
      free(index.p);
      free(entries.p);
    }
    free(src.p);
    free(code.p);
  }
  if (rc == 0) {
    const char *open = "const embed_file embed_files[] = {\n", *close = "  {NULL, NULL, 0}\n};\n";
    buf_add(&c, open, strlen(open));
    buf_add(&c, table.p, table.len);
    buf_add(&c, close, strlen(close));
    if (write_if_changed(out, &c) != 0) rc = 1;
  }
  free(c.p);
  free(table.p);
  return rc;
}
