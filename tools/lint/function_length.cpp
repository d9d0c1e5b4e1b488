// heaplab_function_length: lists functions whose body is longer than a limit (docs/architecture.md
// "Function length"). A lexical scan, not a parser: comments, string and character literals and
// preprocessor lines are blanked first; then every '{' is classified by the text before it since
// the last ';', '{' or '}' of the enclosing scope:
//   - namespace / class / struct / union / enum / extern "C"  -> a scope (its members are scanned)
//   - text with a '(' and no '=' (a declarator, possibly followed by qualifiers, a trailing
//     return type or a constructor's member-initializer list)  -> a function body
//   - anything else (an initializer)                          -> skipped as part of its statement
// Everything inside a function body (lambdas, local classes) counts toward that function.
//
//   heaplab_function_length [--max N] FILE...     prints FILE:LINE: NAME is L lines (max N)
// Exit status: 0 when every function fits, 1 when some do not, 2 on bad usage or unreadable file.
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

/// The source with comments, literals and preprocessor lines replaced by spaces (newlines kept,
/// so that offsets still map to line numbers).
std::string blank_non_code(std::string const& s) {
  std::string out = s;
  std::size_t i   = 0;
  bool line_start = true;
  auto blank      = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < out.size(); ++k) {
      if (out[k] != '\n') out[k] = ' ';
    }
  };
  while (i < s.size()) {
    char const c = s[i];
    if (line_start && c == '#') {  // a preprocessor line, with its continuations
      std::size_t j = i;
      while (j < s.size() && !(s[j] == '\n' && (j == 0 || s[j - 1] != '\\'))) ++j;
      blank(i, j);
      i = j;
      continue;
    }
    if (c == '\n') {
      line_start = true;
      ++i;
      continue;
    }
    if (!std::isspace(static_cast<unsigned char>(c))) line_start = false;
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      std::size_t j = s.find('\n', i);
      if (j == std::string::npos) j = s.size();
      blank(i, j);
      i = j;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      std::size_t j = s.find("*/", i + 2);
      j             = j == std::string::npos ? s.size() : j + 2;
      blank(i, j);
      i = j;
    } else if (c == 'R' && i + 1 < s.size() && s[i + 1] == '"' &&
               (i == 0 ||
                !(std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_'))) {
      std::size_t const open = s.find('(', i);
      if (open == std::string::npos) break;
      std::string const close = ")" + s.substr(i + 2, open - i - 2) + "\"";
      std::size_t j           = s.find(close, open);
      j                       = j == std::string::npos ? s.size() : j + close.size();
      blank(i, j);
      i = j;
    } else if (c == '"' ||
               (c == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(s[i - 1]))))) {
      // (a quote after a hex digit is a digit separator: 1'000'000)
      std::size_t j = i + 1;
      while (j < s.size() && s[j] != c && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
      blank(i, j + 1);
      i = j + 1;
    } else {
      ++i;
    }
  }
  return out;
}

bool has_word(std::string const& text, std::string const& word) {
  std::size_t pos = 0;
  while ((pos = text.find(word, pos)) != std::string::npos) {
    bool const left       = pos == 0 || !(std::isalnum(static_cast<unsigned char>(text[pos - 1])) ||
                                    text[pos - 1] == '_');
    std::size_t const end = pos + word.size();
    bool const right      = end >= text.size() ||
                       !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_');
    if (left && right) return true;
    pos = end;
  }
  return false;
}

/// `text` without what lies inside <...> (template parameter and argument lists).
std::string without_angle_brackets(std::string const& text) {
  std::string out;
  int depth = 0;
  for (char const c : text) {
    if (c == '<') ++depth;
    if (depth == 0) out += c;
    if (c == '>' && depth > 0) --depth;
  }
  return out;
}

/// Whether a '{' after `flat` (a head without template brackets, containing a '(') opens a
/// function body: the head ends with the parameter list's ')', a qualifier (const, noexcept,
/// override, final, mutable, volatile, try, & or &&), a trailing return type (-> after the last
/// ')'), or a constructor's member-initializer list whose last member is brace-initialized
/// ("S() : a_(1), b_{2}"). Anything else ("S() : a_(1), b_" before b_'s '{') is an initializer.
bool ends_like_declarator(std::string const& flat) {
  std::size_t end = flat.size();
  while (end > 0 && std::isspace(static_cast<unsigned char>(flat[end - 1]))) --end;
  if (end == 0) return false;
  char const last         = flat[end - 1];
  std::size_t const close = flat.rfind(')');
  std::size_t const first = flat.find(')');
  if (last == ')' || last == '&') return true;
  if (last == '}') return first != std::string::npos && flat.find(':', first) != std::string::npos;
  if (close != std::string::npos && flat.find("->", close) != std::string::npos) return true;
  std::size_t begin = end;
  while (begin > 0 &&
         (std::isalnum(static_cast<unsigned char>(flat[begin - 1])) || flat[begin - 1] == '_'))
    --begin;
  std::string const word = flat.substr(begin, end - begin);
  return word == "const" || word == "noexcept" || word == "override" || word == "final" ||
         word == "mutable" || word == "volatile" || word == "try";
}

/// The function's name: the identifier (with ::, ~ and operator) just before the declarator's '('.
std::string function_name(std::string const& head) {
  std::size_t depth = 0;
  std::size_t paren = std::string::npos;
  // The declarator's '(' is the first '(' at depth 0 that is not inside template brackets; for
  // "operator()" take the second.
  for (std::size_t k = 0; k < head.size(); ++k) {
    if (head[k] == '<') ++depth;
    if (head[k] == '>' && depth > 0) --depth;
    if (head[k] == '(' && depth == 0) {
      paren = k;
      if (head.compare(k, 2, "()") == 0 && k >= 8 && head.compare(k - 8, 8, "operator") == 0) {
        paren = head.find('(', k + 2);
      }
      break;
    }
  }
  if (paren == std::string::npos) return "?";
  std::size_t end = paren;
  while (end > 0 && std::isspace(static_cast<unsigned char>(head[end - 1]))) --end;
  std::size_t begin = end;
  while (begin > 0) {
    char const p = head[begin - 1];
    if (std::isalnum(static_cast<unsigned char>(p)) || p == '_' || p == ':' || p == '~') {
      --begin;
    } else if (p == '>') {  // Foo<T>::bar
      int d = 0;
      while (begin > 0) {
        char const q = head[begin - 1];
        if (q == '>') ++d;
        if (q == '<') --d;
        --begin;
        if (d == 0) break;
      }
    } else {
      break;
    }
  }
  std::string name = head.substr(begin, end - begin);
  return name.empty() ? "(lambda)" : name;
}

struct Finding {
  std::size_t line;
  std::string name;
  std::size_t length;
};

std::vector<Finding> scan(std::string const& source, std::size_t max_lines) {
  std::string const code = blank_non_code(source);
  std::vector<std::size_t> line_of(code.size() + 1, 1);
  for (std::size_t k = 0, line = 1; k < code.size(); ++k) {
    line_of[k] = line;
    if (code[k] == '\n') ++line;
  }
  enum class Kind { scope, function, other };
  struct Open {
    Kind kind;
    std::size_t at;
    std::string name;
  };
  std::vector<Open> stack;
  std::vector<Finding> found;
  std::string head;  // statement text since the last ';', scope '{' or scope/function '}'
  bool in_function = false;
  for (std::size_t k = 0; k < code.size(); ++k) {
    char const c = code[k];
    if (in_function) {
      if (c == '{') stack.push_back({Kind::other, k, {}});
      if (c == '}' && !stack.empty()) {
        Open const top = stack.back();
        stack.pop_back();
        if (top.kind == Kind::function) {
          in_function             = false;
          std::size_t const lines = line_of[k] - line_of[top.at] + 1;
          if (lines > max_lines) found.push_back({line_of[top.at], top.name, lines});
          head.clear();
        }
      }
      continue;
    }
    if (c == ';') {
      head.clear();
    } else if (c == '{') {
      // Keywords count only outside template brackets and before any '(' ("template <class T>
      // void f() {" is a function; "struct S : Base<T> {" is a scope).
      std::string const outer = without_angle_brackets(head.substr(0, head.find('(')));
      bool const scope        = has_word(outer, "namespace") || has_word(outer, "class") ||
                         has_word(outer, "struct") || has_word(outer, "union") ||
                         has_word(outer, "enum") || has_word(outer, "extern");
      std::string const flat  = without_angle_brackets(head);  // "template <class U = int>"
      std::size_t const paren = flat.find('(');
      std::size_t const eq    = flat.find('=');
      bool const is_operator  = has_word(head, "operator");
      bool const function     = !scope && paren != std::string::npos &&
                            (eq == std::string::npos || eq > paren || is_operator) &&
                            ends_like_declarator(flat);
      if (scope && !(function)) {
        // "struct X {" but not "struct X f() {" -- a class head has no '(' before its name's '{'
        stack.push_back({Kind::scope, k, {}});
        head.clear();
      } else if (function) {
        stack.push_back({Kind::function, k, function_name(head)});
        in_function = true;
      } else {
        stack.push_back({Kind::other, k, {}});
        head += c;
      }
    } else if (c == '}') {
      if (!stack.empty()) {
        Kind const kind = stack.back().kind;
        stack.pop_back();
        if (kind == Kind::scope)
          head.clear();
        else
          head += c;
      }
    } else {
      head += c;
    }
  }
  return found;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t max_lines = 80;
  std::vector<std::string> files;
  for (int a = 1; a < argc; ++a) {
    std::string const arg = argv[a];
    if (arg == "--help" || arg == "-h") {
      std::cout << "usage: heaplab_function_length [--max N] FILE...\n"
                   "  Lists functions whose body (from '{' to '}') is longer than N lines\n"
                   "  (default 80). Exit 0: all fit; 1: some do not; 2: bad usage.\n"
                   "  example: heaplab_function_length --max 80 src/heaplab/soa/heap.cuh\n";
      return 0;
    }
    if (arg == "--max") {
      if (a + 1 >= argc) {
        std::cerr << "heaplab_function_length: --max needs a number\n";
        return 2;
      }
      char* end        = nullptr;
      long const value = std::strtol(argv[++a], &end, 10);
      if (*end != '\0' || value < 1) {
        std::cerr << "heaplab_function_length: --max needs a positive number, got '" << argv[a]
                  << "'\n";
        return 2;
      }
      max_lines = static_cast<std::size_t>(value);
      continue;
    }
    files.push_back(arg);
  }
  if (files.empty()) {
    std::cerr << "heaplab_function_length: no files (see --help)\n";
    return 2;
  }
  int status = 0;
  for (auto const& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::cerr << "heaplab_function_length: cannot read " << file << "\n";
      return 2;
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    for (auto const& f : scan(buffer.str(), max_lines)) {
      std::cout << file << ":" << f.line << ": " << f.name << " is " << f.length << " lines (max "
                << max_lines << ")\n";
      status = 1;
    }
  }
  return status;
}
