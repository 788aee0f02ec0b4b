#include "generate/jinja/parser.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>

#include "generate/jinja/error.h"

namespace potop::jinja {

namespace {

using T = TokenType;

std::shared_ptr<Node> node(NodeType type) {
  auto n = std::make_shared<Node>();
  n->type = type;
  return n;
}

// A node whose children are all in place: its height (one more than its highest child's), and
// a refusal past what the renderer's recursion may walk (a + b + c + ... chains, nested blocks).
NodePtr finish(const std::shared_ptr<Node>& n) {
  int below = 0;
  for (const NodePtr& child : {n->a, n->b, n->c})
    if (child) below = std::max(below, child->height);
  for (const auto* list : {&n->list, &n->body, &n->alternate})
    for (const NodePtr& child : *list) below = std::max(below, child->height);
  for (const auto& [key, value] : n->entries) below = std::max({below, key->height, value->height});
  n->height = below + 1;
  if (n->height > 500) unsupported("nesting or chaining more than 500 deep");
  return n;
}

// Nesting deeper than any chat template goes (parentheses, unary signs, blocks) is refused
// rather than allowed to exhaust the stack.
constexpr int kMaxDepth = 200;

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : tokens_(tokens) {}

  std::vector<NodePtr> program() {
    std::vector<NodePtr> body;
    while (at_ < tokens_.size()) body.push_back(any());
    return body;
  }

 private:
  const Token& token(size_t i) const {
    if (i >= tokens_.size()) syntax_error("unexpected end of template");
    return tokens_[i];
  }
  const Token& current() const { return token(at_); }
  const Token& take() { return token(at_++); }

  void expect(T type, const std::string& what) {
    if (take().type != type) syntax_error("expected " + what);
  }
  bool is(T type, size_t ahead = 0) const { return at_ + ahead < tokens_.size() && tokens_[at_ + ahead].type == type; }
  bool is_identifier(std::string_view name, size_t ahead = 0) const {
    return is(T::kIdentifier, ahead) && tokens_[at_ + ahead].value == name;
  }
  bool is_statement(std::initializer_list<std::string_view> names) const {
    if (!is(T::kOpenStatement) || !is(T::kIdentifier, 1)) return false;
    for (std::string_view n : names)
      if (tokens_[at_ + 1].value == n) return true;
    return false;
  }
  void expect_identifier(std::string_view name) {
    if (!is_identifier(name)) syntax_error(std::string("expected ") += name);
    ++at_;
  }
  void expect_end(std::string_view keyword) {
    expect(T::kOpenStatement, "{%");
    expect_identifier(keyword);
    expect(T::kCloseStatement, "%}");
  }
  std::vector<NodePtr> block_until(std::initializer_list<std::string_view> names) {
    std::vector<NodePtr> body;
    while (!is_statement(names)) body.push_back(any());
    return body;
  }

  NodePtr any() {
    const Token& t = current();
    switch (t.type) {
      case T::kComment: {
        ++at_;
        return node(NodeType::kComment);
      }
      case T::kText: {
        auto n = node(NodeType::kText);
        n->text = take().value;
        return finish(n);
      }
      case T::kOpenStatement: return statement();
      case T::kOpenExpression: {
        ++at_;
        NodePtr e = expression();
        expect(T::kCloseExpression, "}}");
        return e;
      }
      default: syntax_error("unexpected token " + t.value);
    }
  }

  NodePtr statement() {
    const Nesting nesting(depth_);
    expect(T::kOpenStatement, "{%");
    if (!is(T::kIdentifier)) syntax_error("unknown statement " + current().value);
    const std::string name = take().value;
    if (name == "set") return set_statement();
    if (name == "if") {
      NodePtr n = if_statement();
      expect_end("endif");
      return n;
    }
    if (name == "macro") {
      auto n = node(NodeType::kMacro);
      NodePtr callee = primary();
      if (callee->type != NodeType::kIdentifier) syntax_error("expected a macro's name");
      n->text = callee->text;
      n->list = arguments(true);
      expect(T::kCloseStatement, "%}");
      n->body = block_until({"endmacro"});
      expect_end("endmacro");
      return finish(n);
    }
    if (name == "for") {
      NodePtr n = for_statement();
      expect_end("endfor");
      return n;
    }
    if (name == "call") {
      auto n = node(NodeType::kCallBlock);
      if (is(T::kOpenParen)) n->list = arguments(true);
      NodePtr callee = primary();
      if (callee->type != NodeType::kIdentifier) syntax_error("expected an identifier after call");
      auto call = node(NodeType::kCall);
      call->a = callee;
      call->list = arguments(false);
      n->a = call;
      expect(T::kCloseStatement, "%}");
      n->body = block_until({"endcall"});
      expect_end("endcall");
      return finish(n);
    }
    if (name == "break" || name == "continue") {
      expect(T::kCloseStatement, "%}");
      return node(name == "break" ? NodeType::kBreak : NodeType::kContinue);
    }
    if (name == "filter") {
      auto n = node(NodeType::kFilterBlock);
      NodePtr f = primary();
      if (f->type == NodeType::kIdentifier && is(T::kOpenParen)) f = call(f);
      n->b = f;
      expect(T::kCloseStatement, "%}");
      n->body = block_until({"endfilter"});
      expect_end("endfilter");
      return finish(n);
    }
    syntax_error("unknown statement type " + name);
  }

  NodePtr set_statement() {
    auto n = node(NodeType::kSet);
    n->a = sequence(false);
    if (is(T::kEquals)) {
      ++at_;
      n->b = sequence(false);
    } else {
      expect(T::kCloseStatement, "%}");
      n->body = block_until({"endset"});
      expect(T::kOpenStatement, "{%");
      expect_identifier("endset");
    }
    expect(T::kCloseStatement, "%}");
    return finish(n);
  }

  NodePtr if_statement() {
    auto n = node(NodeType::kIf);
    n->a = expression();
    expect(T::kCloseStatement, "%}");
    n->body = block_until({"elif", "else", "endif"});
    if (is_statement({"elif"})) {
      at_ += 2;
      n->alternate.push_back(if_statement());
    } else if (is_statement({"else"})) {
      at_ += 2;
      expect(T::kCloseStatement, "%}");
      n->alternate = block_until({"endif"});
    }
    return finish(n);
  }

  NodePtr for_statement() {
    auto n = node(NodeType::kFor);
    n->a = sequence(true);
    if (n->a->type != NodeType::kIdentifier && n->a->type != NodeType::kTuple)
      syntax_error("expected an identifier or a tuple as the loop variable");
    if (!is_identifier("in")) syntax_error("expected `in` after the loop variable");
    ++at_;
    n->b = expression();
    expect(T::kCloseStatement, "%}");
    n->body = block_until({"endfor", "else"});
    if (is_statement({"else"})) {
      at_ += 2;
      expect(T::kCloseStatement, "%}");
      n->alternate = block_until({"endfor"});
    }
    return finish(n);
  }

  // Expressions separated by commas: a tuple when there is a comma.
  NodePtr sequence(bool primary_only) {
    auto one = [&] { return primary_only ? primary() : expression(); };
    std::vector<NodePtr> items{one()};
    const bool tuple = is(T::kComma);
    while (tuple) {
      ++at_;
      items.push_back(one());
      if (!is(T::kComma)) break;
    }
    if (!tuple) return items[0];
    auto n = node(NodeType::kTuple);
    n->list = std::move(items);
    return finish(n);
  }

  NodePtr expression() {  // `a if b else c`, `a if b`
    const Nesting nesting(depth_);
    NodePtr a = logical_or();
    if (!is_identifier("if")) return a;
    ++at_;
    NodePtr test = logical_or();
    if (is_identifier("else")) {
      ++at_;
      auto n = node(NodeType::kTernary);
      n->a = test;
      n->b = a;
      n->c = expression();
      return finish(n);
    }
    auto n = node(NodeType::kSelect);
    n->a = a;
    n->b = test;
    return finish(n);
  }

  NodePtr binary(std::string op, NodePtr a, NodePtr b) {
    auto n = node(NodeType::kBinary);
    n->text = std::move(op);
    n->a = std::move(a);
    n->b = std::move(b);
    return finish(n);
  }

  NodePtr logical_or() {
    NodePtr left = logical_and();
    while (is_identifier("or")) {
      ++at_;
      left = binary("or", left, logical_and());
    }
    return left;
  }

  NodePtr logical_and() {
    NodePtr left = logical_not();
    while (is_identifier("and")) {
      ++at_;
      left = binary("and", left, logical_not());
    }
    return left;
  }

  NodePtr logical_not() {
    const Nesting nesting(depth_);
    NodePtr result;
    while (is_identifier("not")) {
      ++at_;
      auto n = node(NodeType::kUnary);
      n->text = "not";
      n->a = logical_not();
      result = finish(n);
    }
    return result ? result : comparison();
  }

  NodePtr comparison() {
    NodePtr left = additive();
    while (true) {
      std::string op;
      if (is_identifier("not") && is_identifier("in", 1)) {
        op = "not in";
        at_ += 2;
      } else if (is_identifier("in") || is(T::kComparison)) {
        op = take().value;
      } else {
        break;
      }
      left = binary(op, left, additive());
    }
    return left;
  }

  NodePtr additive() {
    NodePtr left = multiplicative();
    while (is(T::kAdditive)) {
      std::string op = take().value;
      left = binary(op, left, multiplicative());
    }
    return left;
  }

  NodePtr multiplicative() {
    NodePtr left = power();
    while (is(T::kMultiplicative)) {
      std::string op = take().value;
      left = binary(op, left, power());
    }
    return left;
  }

  NodePtr power() {
    NodePtr left = test();
    while (is(T::kPower)) {
      std::string op = take().value;
      left = binary(op, left, test());
    }
    return left;
  }

  NodePtr test() {
    NodePtr operand = filter();
    while (is_identifier("is")) {
      ++at_;
      const bool negate = is_identifier("not");
      if (negate) ++at_;
      NodePtr t = primary();
      if (t->type != NodeType::kIdentifier) syntax_error("expected a test's name after `is`");
      auto n = node(NodeType::kTest);
      n->a = operand;
      n->text = t->text;
      n->negated = negate;
      operand = finish(n);
    }
    return operand;
  }

  NodePtr filter() {
    NodePtr operand = unary_sign();
    while (is(T::kPipe)) {
      ++at_;
      NodePtr f = primary();
      if (f->type != NodeType::kIdentifier) syntax_error("expected a filter's name after |");
      if (is(T::kOpenParen)) f = call(f);
      auto n = node(NodeType::kFilter);
      n->a = operand;
      n->b = f;
      operand = finish(n);
    }
    return operand;
  }

  NodePtr unary_sign() {
    const Nesting nesting(depth_);
    if (at_ < tokens_.size() && (is(T::kUnary) || is(T::kAdditive)) && (current().value == "-" || current().value == "+")) {
      auto n = node(NodeType::kUnary);
      n->text = take().value;
      n->a = unary_sign();
      return finish(n);
    }
    NodePtr m = member(primary());
    return is(T::kOpenParen) ? call(m) : m;
  }

  NodePtr call(NodePtr callee) {
    auto n = node(NodeType::kCall);
    n->a = std::move(callee);
    n->list = arguments(false);
    NodePtr e = member(n);
    return is(T::kOpenParen) ? call(e) : e;
  }

  // ( ... ): a call's arguments, or a macro's parameters.
  std::vector<NodePtr> arguments(bool parameters) {
    expect(T::kOpenParen, "(");
    std::vector<NodePtr> args;
    std::set<std::string> names;
    bool saw_keyword = false, saw_spread = false;
    while (!is(T::kCloseParen)) {
      const bool keyword_spread = is(T::kPower);
      const bool spread = is(T::kMultiplicative) && current().value == "*";
      if (parameters && (keyword_spread || spread))
        syntax_error("argument unpacking is not allowed in parameter declarations");
      if (keyword_spread) {
        ++at_;
        auto n = node(NodeType::kKeywordSpread);
        n->a = expression();
        args.push_back(n);
        if (is(T::kComma)) ++at_;
        if (!is(T::kCloseParen)) syntax_error("** must be applied to the final argument");
        break;
      }
      NodePtr arg;
      if (spread) {
        if (saw_spread) syntax_error("only one * argument unpacking is allowed");
        saw_spread = true;
        ++at_;
        auto n = node(NodeType::kSpread);
        n->a = expression();
        arg = n;
      } else {
        arg = expression();
        if (is(T::kEquals)) {
          ++at_;
          if (arg->type != NodeType::kIdentifier) syntax_error("expected an identifier before =");
          auto n = node(NodeType::kKeywordArgument);
          n->text = arg->text;
          n->a = expression();
          arg = n;
        }
        if (parameters) {
          if (arg->type != NodeType::kIdentifier && arg->type != NodeType::kKeywordArgument)
            syntax_error("expected an identifier for a parameter");
          if (!names.insert(arg->text).second) syntax_error("duplicate parameter name " + arg->text);
        }
        if (arg->type == NodeType::kKeywordArgument)
          saw_keyword = true;
        else if (saw_keyword)
          syntax_error(parameters ? "non-default argument follows default argument"
                                  : "positional arguments must come before keyword arguments");
        else if (saw_spread)
          syntax_error("positional arguments must not follow * argument unpacking");
      }
      args.push_back(arg);
      if (is(T::kComma)) ++at_;
    }
    expect(T::kCloseParen, ")");
    return args;
  }

  // [ ... ]: an index or a slice (a:b:c).
  NodePtr subscript() {
    std::vector<NodePtr> parts;
    bool slice = false;
    while (!is(T::kCloseSquare)) {
      if (is(T::kColon)) {
        parts.push_back(nullptr);
        ++at_;
        slice = true;
      } else {
        parts.push_back(expression());
        if (is(T::kColon)) {
          ++at_;
          slice = true;
        }
      }
    }
    if (parts.empty()) syntax_error("expected an index or a slice in [ ]");
    if (!slice) return parts[0];
    if (parts.size() > 3) syntax_error("a slice has at most 3 parts");
    auto n = node(NodeType::kSlice);
    n->a = parts[0];
    if (parts.size() > 1) n->b = parts[1];
    if (parts.size() > 2) n->c = parts[2];
    return finish(n);
  }

  NodePtr member(NodePtr object) {
    while (is(T::kDot) || is(T::kOpenSquare)) {
      const bool computed = take().type == T::kOpenSquare;
      auto n = node(NodeType::kMember);
      n->a = object;
      n->computed = computed;
      if (computed) {
        n->b = subscript();
        expect(T::kCloseSquare, "]");
      } else {
        n->b = primary();
        if (n->b->type != NodeType::kIdentifier && n->b->type != NodeType::kInteger)
          syntax_error("expected an identifier or an integer after .");
      }
      object = finish(n);
    }
    return object;
  }

  NodePtr primary() {
    const Token& t = take();
    switch (t.type) {
      case T::kNumber: {
        auto n = node(t.value.find('.') != std::string::npos ? NodeType::kFloat : NodeType::kInteger);
        n->number = std::strtod(t.value.c_str(), nullptr);  // JavaScript's Number(): too large is Infinity
        return finish(n);
      }
      case T::kString: {
        auto n = node(NodeType::kString);
        n->text = t.value;
        while (is(T::kString)) n->text += take().value;
        return finish(n);
      }
      case T::kIdentifier: {
        auto n = node(NodeType::kIdentifier);
        n->text = t.value;
        return finish(n);
      }
      case T::kOpenParen: {
        NodePtr e = sequence(false);
        expect(T::kCloseParen, ")");
        return e;
      }
      case T::kOpenSquare: {
        auto n = node(NodeType::kArray);
        while (!is(T::kCloseSquare)) {
          n->list.push_back(expression());
          if (is(T::kComma)) ++at_;
        }
        ++at_;
        return finish(n);
      }
      case T::kOpenCurly: {
        auto n = node(NodeType::kObject);
        while (!is(T::kCloseCurly)) {
          NodePtr key = expression();
          expect(T::kColon, ": between a key and its value");
          n->entries.emplace_back(key, expression());
          if (is(T::kComma)) ++at_;
        }
        ++at_;
        return finish(n);
      }
      default: syntax_error("unexpected token " + t.value);
    }
  }

  // Counts one level of nesting while it lives.
  struct Nesting {
    explicit Nesting(int& depth) : depth_(depth) {
      if (++depth_ > kMaxDepth) unsupported("nesting more than " + std::to_string(kMaxDepth) + " deep");
    }
    ~Nesting() { --depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
    int& depth_;
  };

  const std::vector<Token>& tokens_;
  size_t at_ = 0;
  int depth_ = 0;
};

}  // namespace

std::vector<NodePtr> parse(const std::vector<Token>& tokens) { return Parser(tokens).program(); }

}  // namespace potop::jinja
