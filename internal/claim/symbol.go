package claim

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

// SymbolLines finds the lines of symbol in a file's source: for Go
// (a .go path), a top-level function, method (Type.Method or Method),
// type, variable or constant, doc comment included. ok is false when the
// file is not Go, does not parse, or has no such symbol: the caller
// then claims the whole file, or names lines.
func SymbolLines(filePath string, src []byte, symbol string) (start, end int, ok bool) {
	symbol = strings.TrimSpace(symbol)
	if !strings.HasSuffix(filePath, ".go") || symbol == "" {
		return 0, 0, false
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filePath, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return 0, 0, false
	}
	recv, name, method := strings.Cut(symbol, ".")
	if !method {
		recv, name = "", symbol
	}
	lines := func(from ast.Node, doc *ast.CommentGroup, to ast.Node) (int, int, bool) {
		s := fset.Position(from.Pos()).Line
		if doc != nil {
			s = fset.Position(doc.Pos()).Line
		}
		return s, fset.Position(to.End()).Line, true
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.Name != name {
				continue
			}
			if r := receiverType(d); recv == "" || r == recv {
				return lines(d, d.Doc, d)
			}
		case *ast.GenDecl:
			if recv != "" {
				continue
			}
			for _, s := range d.Specs {
				var names []*ast.Ident
				switch s := s.(type) {
				case *ast.TypeSpec:
					names = []*ast.Ident{s.Name}
				case *ast.ValueSpec:
					names = s.Names
				}
				for _, n := range names {
					if n.Name != name {
						continue
					}
					if len(d.Specs) == 1 {
						return lines(d, d.Doc, d)
					}
					return lines(s, nil, s)
				}
			}
		}
	}
	return 0, 0, false
}

// receiverType is the name of a method's receiver type ("" for a
// function).
func receiverType(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return ""
	}
	t := d.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
