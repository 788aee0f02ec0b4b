// The syntax tree of a chat template, as @huggingface/jinja's parser builds it: one node type
// whose fields each kind uses as its comment says.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace potop::jinja {

enum class NodeType {
  // statements
  kText,             // text: the template's text between tags
  kComment,          //
  kIf,               // a: test; body; alternate (else, or an elif's If)
  kFor,              // a: loop variable (Identifier or Tuple); b: iterable (a Select filters); body; alternate: else
  kSet,              // a: target (Identifier, Tuple, Member); b: value, or null with body (a block set)
  kMacro,            // text: name; list: parameters (Identifier, KeywordArgument); body
  kCallBlock,        // a: the Call; list: caller's parameters; body: caller's
  kFilterBlock,      // b: filter (Identifier or Call); body
  kBreak,
  kContinue,
  // expressions
  kInteger,          // number
  kFloat,            // number
  kString,           // text
  kArray,            // list
  kTuple,            // list
  kObject,           // entries
  kIdentifier,       // text
  kMember,           // a: object; b: property; computed: a[b] rather than a.b
  kCall,             // a: callee; list: arguments
  kBinary,           // text: operator; a, b
  kUnary,            // text: operator ("not", "-", "+"); a
  kFilter,           // a: operand; b: filter (Identifier or Call)
  kTest,             // a: operand; text: test; negated
  kSelect,           // a: value; b: condition (`a if b`, no else)
  kTernary,          // a: condition; b: if true; c: if false
  kSlice,            // a: start, b: stop, c: step (each may be null)
  kKeywordArgument,  // text: name; a: value
  kSpread,           // a: *a
  kKeywordSpread,    // a: **a
};

struct Node;
using NodePtr = std::shared_ptr<const Node>;

struct Node {
  NodeType type;
  std::string text;
  double number = 0;
  bool computed = false, negated = false;
  int height = 1;  // of its subtree (parser.cpp: finish): bounded, as the renderer's recursion walks it
  NodePtr a, b, c;
  std::vector<NodePtr> list, body, alternate;
  std::vector<std::pair<NodePtr, NodePtr>> entries;
};

}  // namespace potop::jinja
