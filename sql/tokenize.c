/*
** sql/tokenize.c: the pure tokenizer (see sql/token.h for the contract) and the keyword
** table.
**
** sql_next_token() switches on a 256-entry character-class table, in the manner of
** SQLite's tokenize.c. Keywords are found by binary search in a sorted table, comparing
** case-insensitively; the same table names tokens for "expected ..." messages. No function
** here allocates or writes anything but its out-parameters.
**
** Not here: which keywords are reserved (that is the %fallback list of sql/parse.y), what
** a token means, error messages.
*/
#include <ctype.h>
#include "sql/token.h"

#include <string.h>

/* Character classes. */
enum {
  CC_SPACE,   /* space, tab, newline, CR, FF, VT */
  CC_ALPHA,   /* a-z A-Z _ and every byte >= 0x80 (UTF-8 identifier characters) */
  CC_DIGIT,   /* 0-9 */
  CC_DOT,     /* . */
  CC_QUOTE,   /* ' */
  CC_DQUOTE,  /* " */
  CC_MINUS,   /* - */
  CC_SLASH,   /* / */
  CC_QUESTION,/* ? */
  CC_LT,      /* < */
  CC_GT,      /* > */
  CC_BANG,    /* ! */
  CC_PIPE,    /* | */
  CC_SINGLE,  /* one-character tokens: ( ) , ; * + % = [ ] */
  CC_ILLEGAL  /* anything else, NUL included */
};

/* Short aliases for the class table below. */
#define SP CC_SPACE
#define AL CC_ALPHA
#define DI CC_DIGIT
#define DT CC_DOT
#define QU CC_QUOTE
#define DQ CC_DQUOTE
#define MI CC_MINUS
#define SL CC_SLASH
#define QM CC_QUESTION
#define CL CC_LT
#define CG CC_GT
#define BA CC_BANG
#define PI CC_PIPE
#define SI CC_SINGLE
#define IL CC_ILLEGAL

/* The class of every byte value (generated once from the rules in the enum above). */
static const unsigned char cclass[256] = {
  IL, IL, IL, IL, IL, IL, IL, IL, IL, SP, SP, SP, SP, SP, IL, IL, /* 00 */
  IL, IL, IL, IL, IL, IL, IL, IL, IL, IL, IL, IL, IL, IL, IL, IL, /* 10 */
  SP, BA, DQ, IL, IL, SI, IL, QU, SI, SI, SI, SI, SI, MI, DT, SL, /* 20 */
  DI, DI, DI, DI, DI, DI, DI, DI, DI, DI, IL, SI, CL, SI, CG, QM, /* 30 */
  IL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, /* 40 */
  AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, SI, IL, SI, IL, AL, /* 50 */
  IL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, /* 60 */
  AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, IL, PI, IL, IL, IL, /* 70 */
  AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, /* 80 */
  AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, /* 90 */
  AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, /* a0 */
  AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, /* b0 */
  AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, /* c0 */
  AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, /* d0 */
  AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, /* e0 */
  AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, AL, /* f0 */
};
#undef SP
#undef AL
#undef DI
#undef DT
#undef QU
#undef DQ
#undef MI
#undef SL
#undef QM
#undef CL
#undef CG
#undef BA
#undef PI
#undef SI
#undef IL

static inline int cls(const char *p) {
  return cclass[(unsigned char)*p];
}

static inline bool is_idchar(const char *p) {
  int k = cls(p);
  return k == CC_ALPHA || k == CC_DIGIT;
}

/* Keywords, sorted by name (ORDER KEYWORDS: keep sorted; the search depends on it). */
typedef struct keyword {
  const char *name; /* upper case */
  int code;         /* TK_* */
} keyword;

static const keyword keywords[] = {
  {"ADD", TK_ADD}, {"ALL", TK_ALL}, {"ALTER", TK_ALTER}, {"ANALYZE", TK_ANALYZE}, {"AND", TK_AND},
  {"ARRAY", TK_ARRAY}, {"AS", TK_AS}, {"ASC", TK_ASC}, {"BEGIN", TK_BEGIN},
  {"BETWEEN", TK_BETWEEN}, {"BY", TK_BY}, {"CASCADE", TK_CASCADE}, {"CASE", TK_CASE},
  {"CAST", TK_CAST}, {"CHECK", TK_CHECK}, {"COLUMN", TK_COLUMN}, {"COMMIT", TK_COMMIT},
  {"CONSTRAINT", TK_CONSTRAINT}, {"CREATE", TK_CREATE}, {"CROSS", TK_CROSS},
  {"DATE", TK_DATE}, {"DELETE", TK_DELETE}, {"DESC", TK_DESC},
  {"DISTINCT", TK_DISTINCT}, {"DROP", TK_DROP}, {"ELSE", TK_ELSE},
  {"END", TK_END}, {"ESCAPE", TK_ESCAPE}, {"EXCEPT", TK_EXCEPT}, {"EXISTS", TK_EXISTS},
  {"EXPLAIN", TK_EXPLAIN}, {"FALSE", TK_FALSE}, {"FIRST", TK_FIRST}, {"FOR", TK_FOR},
  {"FROM", TK_FROM}, {"FULL", TK_FULL}, {"GROUP", TK_GROUP},
  {"HAVING", TK_HAVING}, {"IF", TK_IF}, {"ILIKE", TK_ILIKE},
  {"IN", TK_IN}, {"INCLUDE", TK_INCLUDE}, {"INDEX", TK_INDEX},
  {"INNER", TK_INNER}, {"INTERSECT", TK_INTERSECT}, {"INTO", TK_INTO}, {"IS", TK_IS},
  {"JOIN", TK_JOIN}, {"KEY", TK_KEY}, {"LAST", TK_LAST},
  {"LEFT", TK_LEFT}, {"LIKE", TK_LIKE}, {"LIMIT", TK_LIMIT},
  {"NATURAL", TK_NATURAL}, {"NOT", TK_NOT}, {"NULL", TK_NULL},
  {"NULLS", TK_NULLS}, {"OF", TK_OF}, {"OFFSET", TK_OFFSET}, {"ON", TK_ON},
  {"OR", TK_OR}, {"ORDER", TK_ORDER}, {"OUTER", TK_OUTER},
  {"PRIMARY", TK_PRIMARY}, {"RIGHT", TK_RIGHT}, {"ROLLBACK", TK_ROLLBACK},
  {"ROW_TIMESTAMP", TK_ROW_TIMESTAMP},
  {"SELECT", TK_SELECT}, {"SEQUENCE", TK_SEQUENCE}, {"SET", TK_SET},
  {"SPLIT", TK_SPLIT},
  {"SYSTEM_TIME", TK_SYSTEM_TIME}, {"TABLE", TK_TABLE}, {"THEN", TK_THEN},
  {"TIME", TK_TIME}, {"TIMESTAMP", TK_TIMESTAMP}, {"TRUE", TK_TRUE},
  {"UNION", TK_UNION}, {"UPSERT", TK_UPSERT}, {"USING", TK_USING}, {"VALUES", TK_VALUES},
  {"VIEW", TK_VIEW},
  {"WHEN", TK_WHEN}, {"WHERE", TK_WHERE}, {"WITH", TK_WITH}, {"WITHIN", TK_WITHIN},
};
#define NKEYWORDS (sizeof(keywords) / sizeof(keywords[0]))

/* Case-insensitive comparison of z[0..n) with the upper-case NUL-terminated kw. */
static int kwcmp(const char *z, size_t n, const char *kw) {
  for (size_t i = 0; i < n; i++) {
    unsigned char a = (unsigned char)z[i], b = (unsigned char)kw[i];
    if (a >= 'a' && a <= 'z') a = (unsigned char)(a - 'a' + 'A');
    if (b == 0) return 1;
    if (a != b) return a < b ? -1 : 1;
  }
  return kw[n] == 0 ? 0 : -1;
}

int sql_keyword_code(const char *z, size_t n) {
  if (n < 2 || n > 13) return TK_ID;
  size_t lo = 0, hi = NKEYWORDS;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = kwcmp(z, n, keywords[mid].name);
    if (c == 0) return keywords[mid].code;
    if (c < 0) hi = mid;
    else lo = mid + 1;
  }
  return TK_ID;
}

bool sql_is_keyword(const char *z, size_t n) {
  return sql_keyword_code(z, n) != TK_ID;
}

const char *sql_token_name(int code) {
  for (size_t i = 0; i < NKEYWORDS; i++)
    if (keywords[i].code == code) return keywords[i].name;
  switch (code) {
    case TK_ID: return "identifier";
    case TK_STRING: return "string";
    case TK_BLOB: return "binary literal";
    case TK_INTEGER: return "integer";
    case TK_DECIMAL: return "decimal";
    case TK_FLOAT: return "number";
    case TK_VARIABLE: return "parameter";
    case TK_SEMI: return ";";
    case TK_LP: return "(";
    case TK_RP: return ")";
    case TK_LBRACKET: return "[";
    case TK_RBRACKET: return "]";
    case TK_COMMA: return ",";
    case TK_DOT: return ".";
    case TK_STAR: return "*";
    case TK_SLASH: return "/";
    case TK_REM: return "%";
    case TK_PLUS: return "+";
    case TK_MINUS: return "-";
    case TK_CONCAT: return "||";
    case TK_EQ: return "=";
    case TK_NE: return "<>";
    case TK_LT: return "<";
    case TK_LE: return "<=";
    case TK_GT: return ">";
    case TK_GE: return ">=";
    case TK_HINT: return "hint";
    case TK_NOTX: return "NOT";
    case TK_SEQNEXT: return "NEXT VALUE FOR";
    case TK_SEQCURRENT: return "CURRENT VALUE FOR";
    default: return "?";
  }
}

/* Scans a number starting at p (a digit, or '.' followed by a digit). */
static size_t scan_number(const char *p, const char *limit, int *type) {
  const char *q = p;
  int t = TK_INTEGER;
  while (q < limit && cls(q) == CC_DIGIT) q++;
  if (q < limit && *q == '.') {
    t = TK_DECIMAL;
    q++;
    while (q < limit && cls(q) == CC_DIGIT) q++;
  }
  if (q < limit && (*q == 'e' || *q == 'E')) {
    const char *e = q + 1;
    if (e < limit && (*e == '+' || *e == '-')) e++;
    if (e < limit && cls(e) == CC_DIGIT) {
      while (e < limit && cls(e) == CC_DIGIT) e++;
      q = e;
      t = TK_FLOAT;
    } else {
      /* "1e" or "1e+" without digits: one malformed token */
      *type = TK_ILLEGAL;
      while (e < limit && is_idchar(e)) e++;
      return (size_t)(e - p);
    }
  }
  if (q < limit && (is_idchar(q) || *q == '.')) {
    /* 12abc, 1.2.3: malformed */
    while (q < limit && (is_idchar(q) || *q == '.')) q++;
    *type = TK_ILLEGAL;
    return (size_t)(q - p);
  }
  *type = t;
  return (size_t)(q - p);
}

/* Scans a quoted token ('string' or "identifier") whose quote character is p[0]; doubled
** quotes are escapes. Unterminated (or containing NUL): TK_ILLEGAL over the rest. */
static size_t scan_quoted(const char *p, const char *limit, int *type, int ok_type) {
  char q = p[0];
  const char *s = p + 1;
  while (s < limit) {
    if (*s == 0) break;
    if (*s == q) {
      if (s + 1 < limit && s[1] == q) {
        s += 2;
        continue;
      }
      *type = ok_type;
      return (size_t)(s + 1 - p);
    }
    s++;
  }
  *type = TK_ILLEGAL;
  return (size_t)(limit - p);
}

size_t sql_next_token(const char *p, const char *limit, int *type) {
  const char *q;
  switch (cls(p)) {
    case CC_SPACE:
      q = p + 1;
      while (q < limit && cls(q) == CC_SPACE) q++;
      *type = TK_SPACE;
      return (size_t)(q - p);
    case CC_ALPHA:
      if ((*p == 'x' || *p == 'X') && p + 1 < limit && p[1] == '\'') { /* X'hex': bytes */
        size_t n = scan_quoted(p + 1, limit, type, TK_BLOB);
        if (*type == TK_BLOB) {
          size_t digits = n - 2;
          bool ok = digits % 2 == 0;
          for (size_t i = 0; ok && i < digits; i++) ok = isxdigit((unsigned char)p[2 + i]) != 0;
          if (!ok) *type = TK_ILLEGAL; /* an odd count or a non-hex digit */
        }
        return n + 1;
      }
      q = p + 1;
      while (q < limit && is_idchar(q)) q++;
      *type = sql_keyword_code(p, (size_t)(q - p));
      return (size_t)(q - p);
    case CC_DIGIT:
      return scan_number(p, limit, type);
    case CC_DOT:
      if (p + 1 < limit && cls(p + 1) == CC_DIGIT) return scan_number(p, limit, type);
      *type = TK_DOT;
      return 1;
    case CC_QUOTE:
      return scan_quoted(p, limit, type, TK_STRING);
    case CC_DQUOTE: {
      size_t n = scan_quoted(p, limit, type, TK_ID);
      if (*type == TK_ID && n == 2) *type = TK_ILLEGAL; /* "" is not a name */
      return n;
    }
    case CC_MINUS:
      if (p + 1 < limit && p[1] == '-') {
        q = p + 2;
        while (q < limit && *q != '\n' && *q != 0) q++; /* a NUL is its own token */
        *type = TK_COMMENT;
        return (size_t)(q - p);
      }
      *type = TK_MINUS;
      return 1;
    case CC_SLASH:
      if (p + 1 < limit && p[1] == '*') {
        bool hint = p + 2 < limit && p[2] == '+';
        for (q = p + 2; q + 1 < limit; q++) {
          if (q[0] == 0) {
            *type = TK_ILLEGAL; /* no NUL inside a comment or hint */
            return (size_t)(q + 1 - p);
          }
          if (q[0] == '*' && q[1] == '/' && (!hint || q > p + 2)) {
            *type = hint ? TK_HINT : TK_COMMENT;
            return (size_t)(q + 2 - p);
          }
        }
        *type = TK_ILLEGAL; /* unterminated comment */
        return (size_t)(limit - p);
      }
      *type = TK_SLASH;
      return 1;
    case CC_QUESTION:
      q = p + 1;
      while (q < limit && cls(q) == CC_DIGIT) q++;
      if (q < limit && cls(q) == CC_ALPHA) {
        while (q < limit && is_idchar(q)) q++;
        *type = TK_ILLEGAL;
        return (size_t)(q - p);
      }
      *type = TK_VARIABLE;
      return (size_t)(q - p);
    case CC_LT:
      if (p + 1 < limit && p[1] == '=') { *type = TK_LE; return 2; }
      if (p + 1 < limit && p[1] == '>') { *type = TK_NE; return 2; }
      *type = TK_LT;
      return 1;
    case CC_GT:
      if (p + 1 < limit && p[1] == '=') { *type = TK_GE; return 2; }
      *type = TK_GT;
      return 1;
    case CC_BANG:
      if (p + 1 < limit && p[1] == '=') { *type = TK_NE; return 2; }
      *type = TK_ILLEGAL;
      return 1;
    case CC_PIPE:
      if (p + 1 < limit && p[1] == '|') { *type = TK_CONCAT; return 2; }
      *type = TK_ILLEGAL;
      return 1;
    case CC_SINGLE:
      switch (*p) {
        case '(': *type = TK_LP; break;
        case ')': *type = TK_RP; break;
        case ',': *type = TK_COMMA; break;
        case ';': *type = TK_SEMI; break;
        case '*': *type = TK_STAR; break;
        case '+': *type = TK_PLUS; break;
        case '%': *type = TK_REM; break;
        case '[': *type = TK_LBRACKET; break;
        case ']': *type = TK_RBRACKET; break;
        default: *type = TK_EQ; break; /* '=' */
      }
      return 1;
    default: {
      /* one illegal character; a UTF-8 sequence never starts here (>= 0x80 is alpha) */
      *type = TK_ILLEGAL;
      return 1;
    }
  }
}
