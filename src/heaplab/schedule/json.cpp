// Strict reading and canonical writing of schedule files (docs/schedules.md "File format").
#include "heaplab/schedule/json.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "heaplab/schedule/plan.hpp"
#include "heaplab/schedule/strict_json.hpp"
#include "heaplab/schedule/text.hpp"

namespace heaplab::schedule {

using nlohmann::json;
using ordered = nlohmann::ordered_json;

namespace {

// ------------------------------------------------------------------------------------- helpers

// Strict reading (strict_json.hpp, shared with failure files).
using namespace strict;  // the strict JSON readers (strict_json.hpp)
using Obj = StrictObject;

std::vector<std::string> type_names(core::HeapConfig const& config) {
  std::vector<std::string> out;
  for (auto const& t : config.types) out.push_back(t.name);
  return out;
}

std::uint32_t as_type(json const& j, std::string const& path, core::HeapConfig const& config) {
  std::string const name = as_string(j, path);
  if (auto t = config.type_by_name(name)) return *t;
  fail(path, "unknown type '" + name + "'; types: " + comma_list(type_names(config)));
}

std::uint64_t as_digest(json const& j, std::string const& path) {
  std::string const s = as_string(j, path);
  if (auto d = parse_digest(s)) return *d;
  fail(path,
       "expected a digest like \"0x0123456789abcdef\" (0x and 16 lowercase hex digits), got '" + s +
           "'");
}

// ------------------------------------------------------------------------------------- config

core::HeapConfig read_config(json const& j, std::string const& path) {
  Obj const o(j, path, {"types", "num_blocks", "n", "k1"});
  core::HeapConfig config;
  std::string const tp = o.path("types");
  json const& types    = as_array(o.at("types"), tp);
  if (types.empty()) fail(tp, "the type list is empty");
  if (types.size() > core::kMaxTypes)
    fail(tp,
         "at most " + std::to_string(core::kMaxTypes) + " types, got " +
             std::to_string(types.size()));
  // Names first: pointer fields may refer to types declared later.
  for (std::size_t t = 0; t < types.size(); ++t) {
    Obj const to(types[t], index_path(tp, t), {"name", "size", "base", "abstract", "pointers"});
    core::TypeSpec spec;
    spec.name = as_string(to.at("name"), to.path("name"));
    if (spec.name.empty()) fail(to.path("name"), "a type name must not be empty");
    if (config.type_by_name(spec.name))
      fail(to.path("name"), "two types are named '" + spec.name + "'");
    config.types.push_back(spec);
  }
  for (std::size_t t = 0; t < types.size(); ++t) {
    Obj const to(types[t], index_path(tp, t), {"name", "size", "base", "abstract", "pointers"});
    auto& spec      = config.types[t];
    spec.size_bytes = as_u32(to.at("size"), to.path("size"), kMaxTypeSize);
    if (auto const* b = to.find("base")) spec.base = as_type(*b, to.path("base"), config);
    if (auto const* a = to.find("abstract")) spec.is_abstract = as_bool(*a, to.path("abstract"));
    if (auto const* p = to.find("pointers")) {
      std::string const pp = to.path("pointers");
      json const& fields   = as_array(*p, pp);
      for (std::size_t f = 0; f < fields.size(); ++f) {
        Obj const fo(fields[f], index_path(pp, f), {"name", "pointee", "count"});
        core::PointerFieldSpec field;
        field.name = as_string(fo.at("name"), fo.path("name"));
        if (field.name.empty()) fail(fo.path("name"), "a field name must not be empty");
        field.pointee = as_type(fo.at("pointee"), fo.path("pointee"), config);
        if (auto const* c = fo.find("count"))
          field.count = as_u32(*c, fo.path("count"), kMaxPointerArray);
        if (field.count == 0)
          fail(fo.path("count"), "an array of pointers needs at least 1 element");
        spec.pointer_fields.push_back(field);
      }
    }
  }
  config.num_blocks    = as_u32(o.at("num_blocks"), o.path("num_blocks"), kMaxBlocks);
  config.defrag_factor = as_u32(o.at("n"), o.path("n"));
  config.k1            = as_u32(o.at("k1"), o.path("k1"));
  return config;
}

// -------------------------------------------------------------------------------------- steps

std::vector<std::string> const kDivergenceNames = {
    "all", "alternate", "random_mask", "per_lane_counts", "mixed_types"};
std::vector<std::string> const kSelectNames = {"all", "fraction", "every_kth"};
std::vector<std::string> const kActionNames = {
    "allocate_child", "delete_self", "delete_other_type", "relink"};
std::vector<std::string> const kVariantNames = {
    "forwarding", "recompute_global", "recompute_shared"};
std::vector<std::string> const kOrderNames = {"block-id", "fill"};
std::vector<std::string> const kOpNames    = {"alloc", "free", "parallel_do", "defrag", "check"};

/// Reads the discriminating key of an object first, so that the allowed keys can depend on it.
std::string discriminator(json const& j, std::string const& path, std::string const& key) {
  if (!j.is_object()) fail(path, "expected an object, got " + show(j));
  auto it = j.find(key);
  if (it == j.end()) fail(child_path(path, key), "missing required field '" + key + "'");
  return as_string(*it, child_path(path, key));
}

AllocWave read_alloc(json const& j, std::string const& path, core::HeapConfig const& config) {
  Obj const o(j, path, {"op", "type", "threads", "count", "divergence", "links", "roots"});
  AllocWave a;
  if (auto const* t = o.find("type")) a.type = as_type(*t, o.path("type"), config);
  a.threads = as_u32(o.at("threads"), o.path("threads"));
  if (auto const* c = o.find("count")) a.count = as_u32(*c, o.path("count"));
  if (auto const* d = o.find("divergence")) {
    std::string const dp      = o.path("divergence");
    std::string const pattern = discriminator(*d, dp, "pattern");
    a.divergence              = as_enum<Divergence>(
        d->at("pattern"), child_path(dp, "pattern"), divergence_from_string, kDivergenceNames);
    std::vector<std::string> keys = {"pattern"};
    if (a.divergence == Divergence::random_mask) keys.push_back("seed");
    if (a.divergence == Divergence::per_lane_counts) keys.push_back("counts");
    if (a.divergence == Divergence::mixed_types) keys.push_back("types");
    Obj const dobj(*d, dp, keys);
    if (a.divergence == Divergence::random_mask)
      a.mask_seed = as_u64(dobj.at("seed"), dobj.path("seed"));
    if (a.divergence == Divergence::per_lane_counts) {
      json const& counts = as_array(dobj.at("counts"), dobj.path("counts"));
      if (counts.size() != kWarpSize)
        fail(dobj.path("counts"),
             "needs exactly " + std::to_string(kWarpSize) + " entries (one per lane), got " +
                 std::to_string(counts.size()));
      for (std::size_t i = 0; i < counts.size(); ++i)
        a.lane_counts.push_back(
            as_u32(counts[i], index_path(dobj.path("counts"), i), kMaxLaneCount));
    }
    if (a.divergence == Divergence::mixed_types) {
      json const& types = as_array(dobj.at("types"), dobj.path("types"));
      for (std::size_t i = 0; i < types.size(); ++i)
        a.lane_types.push_back(as_type(types[i], index_path(dobj.path("types"), i), config));
    }
  }
  if (auto const* l = o.find("links")) {
    std::string const lp = o.path("links");
    json const& links    = as_array(*l, lp);
    for (std::size_t i = 0; i < links.size(); ++i) {
      Obj const lo(links[i], index_path(lp, i), {"type", "slot", "seed", "null_fraction"});
      LinkRule rule;
      if (auto const* t = lo.find("type")) {
        rule.type = as_type(*t, lo.path("type"), config);
      } else if (a.type) {
        rule.type = *a.type;
      } else {
        fail(lo.path("type"), "missing: a link rule of a mixed_types wave must name its type");
      }
      rule.slot = as_u32(lo.at("slot"), lo.path("slot"));
      if (auto const* s = lo.find("seed")) rule.seed = as_u64(*s, lo.path("seed"));
      if (auto const* n = lo.find("null_fraction"))
        rule.null_fraction = as_unit(*n, lo.path("null_fraction"));
      a.links.push_back(rule);
    }
  }
  if (auto const* r = o.find("roots")) a.roots = as_bool(*r, o.path("roots"));
  return a;
}

FreeWave read_free(json const& j, std::string const& path, core::HeapConfig const& config) {
  Obj const o(j, path, {"op", "select"});
  std::string const sp = o.path("select");
  json const& s        = o.at("select");
  discriminator(s, sp, "pattern");
  FreeWave f;
  f.select.pattern = as_enum<SelectPattern>(
      s.at("pattern"), child_path(sp, "pattern"), select_pattern_from_string, kSelectNames);
  std::vector<std::string> keys = {"type", "pattern"};
  if (f.select.pattern == SelectPattern::fraction) keys.insert(keys.end(), {"fraction", "seed"});
  if (f.select.pattern == SelectPattern::every_kth) keys.insert(keys.end(), {"k", "offset"});
  Obj const so(s, sp, keys);
  if (auto const* t = so.find("type")) f.select.type = as_type(*t, so.path("type"), config);
  if (f.select.pattern == SelectPattern::fraction) {
    f.select.fraction = as_unit(so.at("fraction"), so.path("fraction"));
    if (auto const* seed = so.find("seed")) f.select.seed = as_u64(*seed, so.path("seed"));
  }
  if (f.select.pattern == SelectPattern::every_kth) {
    f.select.k = as_u32(so.at("k"), so.path("k"));
    if (f.select.k == 0) fail(so.path("k"), "must be at least 1");
    if (auto const* off = so.find("offset")) f.select.offset = as_u32(*off, so.path("offset"));
  }
  return f;
}

ParallelDo read_parallel_do(json const& j,
                            std::string const& path,
                            core::HeapConfig const& config) {
  Obj const o(j, path, {"op", "type", "action"});
  ParallelDo d;
  d.type               = as_type(o.at("type"), o.path("type"), config);
  std::string const ap = o.path("action");
  json const& a        = o.at("action");
  discriminator(a, ap, "kind");
  d.action =
      as_enum<Action>(a.at("kind"), child_path(ap, "kind"), action_from_string, kActionNames);
  std::vector<std::string> keys = {"kind", "fraction", "seed"};
  if (d.action == Action::allocate_child)
    keys.insert(keys.end(), {"child_type", "parent_slot", "child_slot"});
  if (d.action == Action::delete_other_type) keys.push_back("victim_type");
  if (d.action == Action::relink) keys.insert(keys.end(), {"slot", "null_fraction"});
  Obj const ao(a, ap, keys);
  if (auto const* f = ao.find("fraction")) d.fraction = as_unit(*f, ao.path("fraction"));
  if (auto const* s = ao.find("seed")) d.seed = as_u64(*s, ao.path("seed"));
  if (d.action == Action::allocate_child) {
    d.child_type  = as_type(ao.at("child_type"), ao.path("child_type"), config);
    d.parent_slot = as_u32(ao.at("parent_slot"), ao.path("parent_slot"));
    if (auto const* c = ao.find("child_slot")) d.child_slot = as_u32(*c, ao.path("child_slot"));
  }
  if (d.action == Action::delete_other_type)
    d.victim_type = as_type(ao.at("victim_type"), ao.path("victim_type"), config);
  if (d.action == Action::relink) {
    d.slot = as_u32(ao.at("slot"), ao.path("slot"));
    if (auto const* n = ao.find("null_fraction"))
      d.null_fraction = as_unit(*n, ao.path("null_fraction"));
  }
  return d;
}

Defrag read_defrag(json const& j, std::string const& path, core::HeapConfig const& config) {
  Obj const o(j, path, {"op", "type", "n", "k1", "variant", "order"});
  Defrag d;
  d.type = as_type(o.at("type"), o.path("type"), config);
  if (auto const* n = o.find("n")) d.n = as_u32(*n, o.path("n"));
  if (auto const* k = o.find("k1")) d.k1 = as_u32(*k, o.path("k1"));
  if (auto const* v = o.find("variant"))
    d.variant = as_enum<core::RewriteVariant>(
        *v, o.path("variant"), rewrite_variant_from_string, kVariantNames);
  if (auto const* r = o.find("order"))
    d.order = as_enum<core::CandidateOrder>(
        *r, o.path("order"), core::candidate_order_from_string, kOrderNames);
  return d;
}

Check read_check(json const& j, std::string const& path) {
  Obj const o(j, path, {"op", "graph_digest", "snapshot_digest"});
  Check c;
  if (auto const* g = o.find("graph_digest"))
    c.graph_digest = as_digest(*g, o.path("graph_digest"));
  if (auto const* s = o.find("snapshot_digest"))
    c.snapshot_digest = as_digest(*s, o.path("snapshot_digest"));
  return c;
}

Step read_step(json const& j, std::string const& path, core::HeapConfig const& config) {
  std::string const op = discriminator(j, path, "op");
  if (op == "alloc") return read_alloc(j, path, config);
  if (op == "free") return read_free(j, path, config);
  if (op == "parallel_do") return read_parallel_do(j, path, config);
  if (op == "defrag") return read_defrag(j, path, config);
  if (op == "check") return read_check(j, path);
  fail(child_path(path, "op"),
       "unknown step '" + op + "'; expected one of: " + comma_list(kOpNames));
}

// ------------------------------------------------------------------------------------ writing

std::string name_of(core::HeapConfig const& config, std::uint32_t t) {
  return t < config.num_types() ? config.types[t].name : "<type " + std::to_string(t) + ">";
}

// ------------------------------------------------------------------------------- text scanning

/// Walks JSON text that nlohmann already accepted; never recurses deeper than kMaxDepth.
class Scanner {
 public:
  static constexpr std::size_t kMaxDepth = kMaxNestingDepth;
  explicit Scanner(std::string_view text) : s_(text) {}

  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool peek(char c) {
    ws();
    return i_ < s_.size() && s_[i_] == c;
  }
  /// At '"': the raw characters between the quotes (escapes left as written).
  std::string string() {
    std::size_t const start = ++i_;
    while (i_ < s_.size() && s_[i_] != '"') i_ += s_[i_] == '\\' ? 2 : 1;
    std::string out(s_.substr(start, std::min(i_, s_.size()) - start));
    ++i_;
    return out;
  }
  /// Skips one value without recursion.
  void skip_value() {
    ws();
    if (i_ >= s_.size()) return;
    if (s_[i_] == '"') {
      string();
      return;
    }
    if (s_[i_] != '{' && s_[i_] != '[') {
      while (i_ < s_.size() &&
             std::string_view(",]} \t\r\n").find(s_[i_]) == std::string_view::npos)
        ++i_;
      return;
    }
    std::size_t depth = 0;
    do {
      char const c = s_[i_];
      if (c == '"') {
        string();
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') --depth;
      ++i_;
    } while (depth > 0 && i_ < s_.size());
  }
  std::size_t pos() const { return i_; }
  void advance() { ++i_; }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
};

using PathToken = std::variant<std::string, std::size_t>;

std::vector<PathToken> split_path(std::string const& path) {
  std::vector<PathToken> out;
  std::size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '.') {
      ++i;
      continue;
    }
    if (path[i] == '[') {
      std::size_t const close = path.find(']', i);
      if (close == std::string::npos) break;
      out.emplace_back(static_cast<std::size_t>(std::stoull(path.substr(i + 1, close - i - 1))));
      i = close + 1;
      continue;
    }
    std::size_t const end = path.find_first_of(".[", i);
    out.emplace_back(path.substr(i, end == std::string::npos ? std::string::npos : end - i));
    i = end == std::string::npos ? path.size() : end;
  }
  return out;
}

struct DuplicateKey {
  std::string path;
  std::size_t offset = 0;
};

/// The key as nlohmann-json stores it: `raw` is the text between the quotes of a key of a
/// document that nlohmann-json accepted, so escapes ("\u0061") are valid and decode here.
std::string decoded_key(std::string const& raw) {
  if (raw.find('\\') == std::string::npos) return raw;
  return json::parse("\"" + raw + "\"").get<std::string>();
}

/// Finds the first duplicate key (nlohmann-json keeps the last value silently). `path` is the
/// path of the value at the scanner, extended and restored in place (no string per element), so
/// that the scan is linear in the text.
void find_duplicates(Scanner& sc,
                     std::string& path,
                     std::size_t depth,
                     std::optional<DuplicateKey>& found) {
  if (found) return;
  sc.ws();
  if (depth >= Scanner::kMaxDepth || !(sc.peek('{') || sc.peek('['))) {
    sc.skip_value();
    return;
  }
  bool const object = sc.peek('{');
  sc.advance();
  std::set<std::string> keys;
  std::size_t const length = path.size();
  for (std::size_t index = 0;; ++index) {
    if (sc.peek(object ? '}' : ']')) {
      sc.advance();
      return;
    }
    if (object) {
      sc.ws();
      std::size_t const at  = sc.pos();
      std::string const key = sc.string();
      if (length > 0) path += '.';
      path += key;
      if (!keys.insert(decoded_key(key)).second) {
        found = DuplicateKey{path, at};
        return;
      }
      sc.ws();
      sc.advance();  // ':'
    } else {
      path += '[';
      path += std::to_string(index);
      path += ']';
    }
    find_duplicates(sc, path, depth + 1, found);
    if (found) return;
    path.resize(length);
    if (sc.peek(',')) sc.advance();
  }
}

/// The scan before nlohmann-json builds anything, one pass, no recursion, string contents skipped:
/// - rejects nesting deeper than kMaxNestingDepth (a DOM nested a million deep takes gigabytes);
/// - rejects NUL bytes anywhere: JSON text never contains one (escaped as \u0000 in strings), and
///   nlohmann-json takes a NUL outside a string for the end of the input, ignoring what follows.
/// Text that is invalid otherwise is left to the parser (up to the first syntax error the scan and
/// the parser agree on what is inside a string). The first offending byte is reported.
void prescan(std::string_view text) {
  std::size_t depth = 0;
  bool in_string    = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char const c = text[i];
    if (c == '\0') {
      TextPosition const p = position_of(text, i);
      throw schedule_error(
          "",
          "invalid JSON: a NUL byte (JSON text never contains one; a binary file?)",
          p.line,
          p.column);
    }
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNestingDepth) {
        TextPosition const p = position_of(text, i);
        throw schedule_error("",
                             "invalid JSON: arrays and objects nested deeper than " +
                                 std::to_string(kMaxNestingDepth) +
                                 " levels (the limit of heaplab files)",
                             p.line,
                             p.column);
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

/// A message with every byte outside printable ASCII written as \xHH (nlohmann quotes the
/// bytes it read, which may be invalid UTF-8).
std::string printable(std::string const& s) {
  std::string out;
  for (unsigned char const c : s) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out.size() > 200 ? out.substr(0, 197) + "..." : out;
}

struct NumberToken {
  std::size_t offset = 0;
  std::string text;
};

/// The first number outside strings that is not a finite double (what nlohmann-json reports as
/// out_of_range 406 without a position).
std::optional<NumberToken> first_overflowing_number(std::string_view text) {
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char const c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (c != '-' && (c < '0' || c > '9')) continue;
    std::size_t end = i;
    while (end < text.size() &&
           std::string_view("0123456789+-.eE").find(text[end]) != std::string_view::npos)
      ++end;
    std::string const token(text.substr(i, end - i));
    double const v = std::strtod(token.c_str(), nullptr);
    if (!std::isfinite(v))
      return NumberToken{i, token.size() > 40 ? token.substr(0, 37) + "..." : token};
    i = end - 1;
  }
  return std::nullopt;
}

}  // namespace

// ------------------------------------------------------------------------------------- public

TextPosition position_of(std::string_view text, std::size_t offset) {
  TextPosition p{1, 1};
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

TextPosition locate(std::string_view text, std::string const& path) {
  Scanner sc(text);
  sc.ws();
  std::size_t best = sc.pos();
  for (auto const& token : split_path(path)) {
    bool const want_object = std::holds_alternative<std::string>(token);
    if (!sc.peek(want_object ? '{' : '[')) break;
    sc.advance();
    bool found = false;
    for (std::size_t index = 0; !found; ++index) {
      if (sc.peek(want_object ? '}' : ']')) break;
      bool match = false;
      if (want_object) {
        sc.ws();
        match = sc.string() == std::get<std::string>(token);
        sc.ws();
        sc.advance();  // ':'
      } else {
        match = index == std::get<std::size_t>(token);
      }
      sc.ws();
      if (match) {
        best  = sc.pos();
        found = true;
        break;
      }
      sc.skip_value();
      if (!sc.peek(',')) break;
      sc.advance();
    }
    if (!found) break;
  }
  return position_of(text, best);
}

ordered config_to_json(core::HeapConfig const& config) {
  ordered types = ordered::array();
  for (auto const& t : config.types) {
    ordered type = {{"name", t.name}, {"size", t.size_bytes}, {"abstract", t.is_abstract}};
    if (t.base) type["base"] = name_of(config, *t.base);
    ordered pointers = ordered::array();
    for (auto const& f : t.pointer_fields)
      pointers.push_back(
          {{"name", f.name}, {"pointee", name_of(config, f.pointee)}, {"count", f.count}});
    type["pointers"] = std::move(pointers);
    types.push_back(std::move(type));
  }
  return {{"types", std::move(types)},
          {"num_blocks", config.num_blocks},
          {"n", config.defrag_factor},
          {"k1", config.k1}};
}

ordered step_to_json(core::HeapConfig const& config, Step const& step) {
  auto const tn = [&](std::uint32_t t) { return name_of(config, t); };
  ordered j     = {{"op", step_name(step)}};
  if (auto const* a = std::get_if<AllocWave>(&step)) {
    if (a->type) j["type"] = tn(*a->type);
    j["threads"] = a->threads;
    if (a->count) j["count"] = *a->count;
    ordered d = {{"pattern", to_string(a->divergence)}};
    if (a->divergence == Divergence::random_mask) d["seed"] = a->mask_seed;
    if (a->divergence == Divergence::per_lane_counts) d["counts"] = a->lane_counts;
    if (a->divergence == Divergence::mixed_types) {
      ordered types = ordered::array();
      for (auto t : a->lane_types) types.push_back(tn(t));
      d["types"] = std::move(types);
    }
    j["divergence"] = std::move(d);
    ordered links   = ordered::array();
    for (auto const& l : a->links)
      links.push_back({{"type", tn(l.type)},
                       {"slot", l.slot},
                       {"seed", l.seed},
                       {"null_fraction", l.null_fraction}});
    j["links"] = std::move(links);
    j["roots"] = a->roots;
  } else if (auto const* f = std::get_if<FreeWave>(&step)) {
    auto const& s = f->select;
    ordered sel   = {{"pattern", to_string(s.pattern)}};
    if (s.type) sel["type"] = tn(*s.type);
    if (s.pattern == SelectPattern::fraction) {
      sel["fraction"] = s.fraction;
      sel["seed"]     = s.seed;
    }
    if (s.pattern == SelectPattern::every_kth) {
      sel["k"]      = s.k;
      sel["offset"] = s.offset;
    }
    j["select"] = std::move(sel);
  } else if (auto const* p = std::get_if<ParallelDo>(&step)) {
    j["type"] = tn(p->type);
    ordered a = {{"kind", to_string(p->action)}, {"fraction", p->fraction}, {"seed", p->seed}};
    if (p->action == Action::allocate_child) {
      a["child_type"]  = tn(p->child_type);
      a["parent_slot"] = p->parent_slot;
      if (p->child_slot) a["child_slot"] = *p->child_slot;
    }
    if (p->action == Action::delete_other_type) a["victim_type"] = tn(p->victim_type);
    if (p->action == Action::relink) {
      a["slot"]          = p->slot;
      a["null_fraction"] = p->null_fraction;
    }
    j["action"] = std::move(a);
  } else if (auto const* d = std::get_if<Defrag>(&step)) {
    j["type"] = tn(d->type);
    if (d->n) j["n"] = *d->n;
    if (d->k1) j["k1"] = *d->k1;
    j["variant"] = variant_name(d->variant);
    // Written only when not the default: files of the paper's order stay as they were.
    if (d->order != core::CandidateOrder::block_id) j["order"] = core::to_string(d->order);
  } else if (auto const* c = std::get_if<Check>(&step)) {
    if (c->graph_digest) j["graph_digest"] = format_digest(*c->graph_digest);
    if (c->snapshot_digest) j["snapshot_digest"] = format_digest(*c->snapshot_digest);
  }
  return j;
}

ordered to_json(Schedule const& schedule) {
  ordered j = {{"format", kFormatName}, {"version", kFormatVersion}};
  if (!schedule.description.empty()) j["description"] = schedule.description;
  j["config"]   = config_to_json(schedule.config);
  ordered steps = ordered::array();
  for (auto const& s : schedule.steps) steps.push_back(step_to_json(schedule.config, s));
  j["steps"] = std::move(steps);
  return j;
}

Schedule from_json(json const& document) {
  if (!document.is_object())
    fail("",
         "a schedule file is a JSON object with \"format\": \"" + std::string(kFormatName) +
             "\", got " + show(document));
  // Format and version first: a newer file should say so before its new keys are rejected.
  auto const format = document.find("format");
  if (format == document.end())
    fail("format",
         "missing: not a heaplab schedule (expected \"format\": \"" + std::string(kFormatName) +
             "\")");
  if (as_string(*format, "format") != kFormatName)
    fail("format", "expected \"" + std::string(kFormatName) + "\", got " + show(*format));
  auto const version = document.find("version");
  if (version == document.end()) fail("version", "missing (this heaplab reads version 1)");
  std::uint64_t const v = as_u64(*version, "version");
  if (v != kFormatVersion)
    fail("version",
         "unsupported version " + std::to_string(v) + "; this heaplab reads version " +
             std::to_string(kFormatVersion));
  Obj const o(document, "", {"format", "version", "description", "config", "steps"});
  Schedule s;
  if (auto const* d = o.find("description")) s.description = as_string(*d, "description");
  s.config          = read_config(o.at("config"), "config");
  json const& steps = as_array(o.at("steps"), "steps");
  if (steps.size() > kMaxStepsInFile)
    fail("steps", "at most " + std::to_string(kMaxStepsInFile) + " steps");
  for (std::size_t i = 0; i < steps.size(); ++i)
    s.steps.push_back(read_step(steps[i], index_path("steps", i), s.config));
  validate(s);
  return s;
}

Schedule from_json(ordered const& document) { return from_json(json(document)); }

std::size_t max_file_mib() {
  char const* setting = std::getenv("HEAPLAB_MAX_FILE_MIB");
  if (setting == nullptr || *setting == '\0') return kDefaultMaxFileMiB;
  std::size_t mib = 0;
  bool ok         = true;
  for (char const* c = setting; *c != '\0' && ok; ++c) {
    ok  = *c >= '0' && *c <= '9' && mib <= kMaxFileMiBSetting;
    mib = mib * 10 + static_cast<std::size_t>(*c - '0');
  }
  if (!ok || mib < 1 || mib > kMaxFileMiBSetting)
    throw schedule_error("",
                         "HEAPLAB_MAX_FILE_MIB='" + std::string(setting).substr(0, 40) +
                             "' must be a whole number of MiB from 1 to " +
                             std::to_string(kMaxFileMiBSetting));
  return mib;
}

namespace {

/// Reading one open file for read_text_file: at most `limit` bytes (`too_large` past it), read(2)
/// retried on EINTR; errors through `error`.
struct BoundedReader {
  int fd;
  std::size_t limit;
  std::function<schedule_error(std::string const&)> error;
  std::string too_large;
  static constexpr std::size_t kChunk = std::size_t{1} << 20;

  /// Up to `want` bytes into `to`; 0 at the end.
  std::size_t read_into(char* to, std::size_t want) const {
    ssize_t got = 0;
    do {
      got = ::read(fd, to, want);
    } while (got < 0 && errno == EINTR);
    if (got < 0) throw error(std::string("cannot read the file: ") + std::strerror(errno));
    return static_cast<std::size_t>(got);
  }

  /// A regular file of `size` bytes (at stat time), read straight into the string it returns:
  /// memory is its size plus one byte (the byte that tells a file that grew since), and grows in
  /// steps of 1 MiB only while the file keeps growing.
  std::string regular(std::size_t size) const {
    std::string text(std::min(size, limit) + 1, '\0');
    std::size_t total = 0;
    for (;;) {
      if (total == text.size()) text.resize(std::min(text.size() + kChunk, limit + 1));
      std::size_t const got = read_into(text.data() + total, text.size() - total);
      if (got == 0) break;
      total += got;
      if (total > limit) throw error(too_large);
    }
    text.resize(total);
    return text;
  }

  /// A pipe, a FIFO or a device (no size): through one scratch buffer into chunks of 1 MiB filled
  /// to the brim, so that memory stays within what was read plus 2 MiB, however small the reads
  /// (a pipe hands out a few KiB per read; a buffer per read kept 1 MiB each: 4 GB for 256 MiB).
  std::string stream(std::size_t& total) const {
    std::vector<std::string> chunks;
    std::string scratch(std::min(kChunk, limit + 1), '\0');
    std::string chunk;
    for (;;) {
      std::size_t const got =
          read_into(scratch.data(), std::min(scratch.size(), limit + 1 - total));
      if (got == 0) break;
      total += got;
      if (total > limit) throw error(too_large);
      for (std::size_t done = 0; done < got;) {
        if (chunk.capacity() < kChunk) chunk.reserve(kChunk);
        std::size_t const n = std::min(got - done, kChunk - chunk.size());
        chunk.append(scratch.data() + done, n);
        done += n;
        if (chunk.size() == kChunk) {
          chunks.push_back(std::move(chunk));
          chunk = std::string();
        }
      }
    }
    std::string().swap(scratch);
    if (chunks.empty()) return chunk;
    std::string text;
    text.reserve(total);
    for (auto& c : chunks) {
      text += c;
      std::string().swap(c);
    }
    text += chunk;
    return text;
  }
};

}  // namespace

std::string read_text_file(std::filesystem::path const& file) {
  auto const error = [&](std::string const& reason) {
    return schedule_error("", reason, 0, 0, file.string());
  };
  std::size_t mib = 0;
  try {
    mib = max_file_mib();
  } catch (schedule_error const& e) {
    throw error(e.reason());
  }
  std::size_t const limit = mib << 20;
  std::string const too_large =
      "file is larger than the limit of " + std::to_string(mib) +
      " MiB (HEAPLAB_MAX_FILE_MIB sets another limit; docs/schedules.md \"Limits\")";
  // "-" is standard input, as for most command-line tools (messages still say "-").
  int const fd = file == "-" ? ::dup(STDIN_FILENO) : ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw error(std::string("cannot open the file: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } const closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw error(std::string("cannot read the file: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw error("is a directory, not a file");
  bool const regular = S_ISREG(st.st_mode);
  if (regular && static_cast<std::uint64_t>(st.st_size) > limit) throw error(too_large);
  // A regular file may still grow while it is read, and a pipe or a device has no size: either
  // way at most limit + 1 bytes are read.
  BoundedReader const reader{fd, limit, error, too_large};
  std::size_t total = 0;
  try {
    return regular ? reader.regular(static_cast<std::size_t>(st.st_size)) : reader.stream(total);
  } catch (std::bad_alloc const&) {
    throw error("out of memory after reading " + std::to_string(total >> 20) +
                " MiB: this machine cannot hold a file of the limit of " + std::to_string(mib) +
                " MiB (HEAPLAB_MAX_FILE_MIB sets another limit; docs/schedules.md \"Limits\")");
  }
}

namespace {

/// The first string (value or key) of `j` that holds a terminal control code (text.hpp
/// control_code_at), as its path and the code; nothing when there is none. The depth is bounded
/// by the prescan (64 levels).
std::optional<std::pair<std::string, std::string>> control_code_in(json const& j,
                                                                   std::string const& path) {
  auto const code_in = [](std::string const& s) -> std::optional<std::string> {
    for (std::size_t i = 0; i < s.size(); ++i)
      if (std::size_t const n = control_code_at(s, i)) return terminal_safe(s.substr(i, n));
    return std::nullopt;
  };
  if (j.is_string()) {
    if (auto const code = code_in(j.get_ref<std::string const&>())) return std::pair{path, *code};
  } else if (j.is_object()) {
    for (auto const& item : j.items()) {
      std::string const child = path.empty() ? item.key() : path + "." + item.key();
      if (auto const code = code_in(item.key())) return std::pair{child, *code};
      if (auto found = control_code_in(item.value(), child)) return found;
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i)
      if (auto found = control_code_in(j[i], path + "[" + std::to_string(i) + "]")) return found;
  }
  return std::nullopt;
}

/// Throws (located in `text`) when a string of `document` holds a terminal control code.
void refuse_control_codes(std::string_view text, json const& document) {
  if (auto const found = control_code_in(document, "")) {
    TextPosition const p = locate(text, found->first);
    throw schedule_error(found->first,
                         "a terminal control code (" + found->second +
                             ") in a string: heaplab files carry none (only newlines and tabs), "
                             "so that printing one cannot act on a terminal",
                         p.line,
                         p.column);
  }
}

}  // namespace

nlohmann::json parse_document(std::string_view text) {
  prescan(text);
  if (text.empty()) throw schedule_error("", "invalid JSON: the input is empty", 1, 1);
  json document;
  try {
    document = json::parse(text.begin(), text.end());
  } catch (json::parse_error const& e) {
    // nlohmann's byte is 1-based and points at the last character read.
    std::size_t const offset = e.byte > 0 ? e.byte - 1 : 0;
    TextPosition const p     = position_of(text, offset);
    std::string what         = e.what();
    auto const colon         = what.find(": ", what.find("parse error"));
    if (colon != std::string::npos) what = what.substr(colon + 2);
    throw schedule_error("", "invalid JSON: " + printable(what), p.line, p.column);
  } catch (json::exception const& e) {
    // out_of_range 406 ("number overflow") carries no position: find the number ourselves.
    if (auto const number = first_overflowing_number(text)) {
      TextPosition const p = position_of(text, number->offset);
      throw schedule_error("",
                           "invalid JSON: the number " + printable(number->text) +
                               " is out of range (beyond the largest double, about 1.8e308)",
                           p.line,
                           p.column);
    }
    std::string what = e.what();
    auto const close = what.find("] ");
    if (close != std::string::npos) what = what.substr(close + 2);
    throw schedule_error("", "invalid JSON: " + printable(what), 1, 1);
  }
  Scanner sc(text);
  std::optional<DuplicateKey> dup;
  std::string path;
  find_duplicates(sc, path, 0, dup);
  if (dup) {
    TextPosition const p = position_of(text, dup->offset);
    throw schedule_error(dup->path, "duplicate key", p.line, p.column);
  }
  refuse_control_codes(text, document);
  return document;
}

Schedule from_document(std::string_view text, nlohmann::json const& document) {
  try {
    return from_json(document);
  } catch (schedule_error const& e) {
    TextPosition const p = locate(text, e.path());
    throw schedule_error(e.path(), e.reason(), p.line, p.column);
  }
}

Schedule parse(std::string_view text) { return from_document(text, parse_document(text)); }

Schedule load(std::filesystem::path const& file) {
  std::string const text = read_text_file(file);
  try {
    return parse(text);
  } catch (schedule_error const& e) {
    throw schedule_error(e.path(), e.reason(), e.line(), e.column(), file.string());
  }
}

std::string dump(Schedule const& schedule) { return to_json(schedule).dump(2) + "\n"; }

}  // namespace heaplab::schedule
