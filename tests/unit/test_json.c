/* Unit tests for the text helpers of src/base/json.c: every --json output is valid UTF-8 JSON
 * whatever bytes the database holds, and terminal text carries no control sequence. */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "test.h"

/* The output of json_print_text for one string value. */
static char *print_string(const char *value) {
  cJSON *j = cJSON_CreateString(value);
  char *s = json_print_text(j, 0);
  cJSON_Delete(j);
  return s;
}

TEST(valid_utf8_passes_unchanged) {
  char *s = print_string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80");
  CHECK_STR(s, "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80\"");
  free(s);
}

TEST(invalid_bytes_become_replacement_characters) {
  /* A lone continuation byte, Latin-1, a cut sequence, an overlong '/', a surrogate. */
  char *s = print_string(
      "a\x80"
      "b\xe9"
      "c\xe2\x82"
      "d\xc0\xaf"
      "e\xed\xa0\x80");
  CHECK_STR(s,
            "\"a\xef\xbf\xbd"
            "b\xef\xbf\xbd"
            "c\xef\xbf\xbd\xef\xbf\xbd"
            "d\xef\xbf\xbd\xef\xbf\xbd"
            "e\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
  free(s);
  /* Keys too, and the result parses back. */
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "k\xff", "\x1b[31m\xfe");
  char *t = json_print_text(o, 1);
  cJSON *back = cJSON_Parse(t);
  CHECK(back != NULL);
  CHECK_STR(cJSON_GetObjectItemCaseSensitive(back, "k\xef\xbf\xbd")->valuestring,
            "\x1b[31m\xef\xbf\xbd");
  CHECK(strstr(t, "\\u001b[31m") != NULL); /* controls are cJSON's \u escapes */
  cJSON_Delete(back);
  cJSON_Delete(o);
  free(t);
}

TEST(terminal_text_escapes_controls) {
  char *s = json_terminal_text(
      "ok\x1b]0;title\x07\ttab\nnl\x7f\xc2\x9b"
      "31m\xff\xc3\xa9",
      NULL);
  CHECK_STR(s, "ok\\x1b]0;title\\x07\\x09tab\\x0anl\\x7f\\xc2\\x9b31m\\xff\xc3\xa9");
  free(s);
  char *k = json_terminal_text("line\n\tnext\r\x1b", "\n\t");
  CHECK_STR(k, "line\n\tnext\\x0d\\x1b");
  free(k);
  CHECK(json_terminal_text(NULL, NULL) == NULL);
}

TEST(terminal_safe_walks_the_tree) {
  cJSON *root = cJSON_CreateArray();
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", "a\x1b[2Jb");
  cJSON_AddStringToObject(o, "plain", "unchanged");
  cJSON_AddNumberToObject(o, "n", 3);
  cJSON_AddItemToArray(root, o);
  json_terminal_safe(root, NULL);
  CHECK_STR(cJSON_GetObjectItemCaseSensitive(o, "name")->valuestring, "a\\x1b[2Jb");
  CHECK_STR(cJSON_GetObjectItemCaseSensitive(o, "plain")->valuestring, "unchanged");
  CHECK_INT(cJSON_GetObjectItemCaseSensitive(o, "n")->valueint, 3);
  cJSON_Delete(root);
}
