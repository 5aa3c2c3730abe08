package report

import (
	"regexp"
	"strings"
)

// locate finds where the current case failed in a failure text.
func (p *junitParser) locate(s string) loc {
	c := p.cur
	if c.classname != "" {
		for _, m := range javaFrameRE.FindAllStringSubmatch(s, 200) {
			fn := m[1]
			if i := strings.LastIndexByte(fn, '/'); i >= 0 { // "app//com.acme.X.m", "java.base/java.lang.X.m"
				fn = fn[i+1:]
			}
			if strings.HasPrefix(fn, c.classname+".") || strings.HasPrefix(fn, c.classname+"$") {
				return loc{m[2], atoi(m[3])}
			}
		}
	}
	if c.file != "" {
		for _, m := range locRE.FindAllStringSubmatch(s, 200) {
			if sameFile(m[1], c.file) {
				return loc{m[1], atoi(m[2])}
			}
		}
		// Python's own frames: `File "/x/tests/test_a.py", line 3`
		// (a SyntaxError when pytest collects the module).
		for _, m := range pyFileLineRE.FindAllStringSubmatch(s, 200) {
			if sameFile(m[1], c.file) {
				return loc{m[1], atoi(m[2])}
			}
		}
	}
	if m := javaFrameRE.FindStringSubmatch(s); m != nil {
		// Skip the assertion library's frames: the first frame outside
		// well-known framework packages.
		for _, m := range javaFrameRE.FindAllStringSubmatch(s, 200) {
			fn := m[1]
			if i := strings.LastIndexByte(fn, '/'); i >= 0 {
				fn = fn[i+1:]
			}
			if !javaFrameworkFrame(fn) {
				return loc{m[2], atoi(m[3])}
			}
		}
		return loc{m[2], atoi(m[3])}
	}
	return findLoc(s)
}

var pyFileLineRE = regexp.MustCompile(`File "([^"]+)", line (\d+)`)

func sameFile(a, b string) bool {
	a = strings.ReplaceAll(a, "\\", "/")
	b = strings.ReplaceAll(b, "\\", "/")
	return a == b || strings.HasSuffix(a, "/"+b) || strings.HasSuffix(b, "/"+a)
}

func javaFrameworkFrame(fn string) bool {
	for _, p := range []string{"org.junit.", "junit.", "org.opentest4j.", "org.assertj.", "org.hamcrest.", "java.", "javax.", "jdk.", "sun.",
		"kotlin.", "scala.", "org.testng.", "org.mockito.", "org.apache.maven.", "org.gradle.", "com.google.common.truth.", "org.spockframework."} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

var (
	javaClassRE  = regexp.MustCompile(`^[\p{L}_$][\p{L}\p{N}_$]*(?:\.[\p{L}_$][\p{L}\p{N}_$]*)*$`)
	jsFileRE     = regexp.MustCompile(`\.(?:[cm]?[jt]sx?|vue|svelte|coffee)$`)
	pyClassRE    = regexp.MustCompile(`^[A-Z]\w*$`)
	pyIdentRE    = regexp.MustCompile(`^[A-Za-z_][\w-]*$`)
	pyTestFileRE = regexp.MustCompile(`^(?:test_\w*|\w*_test)$`)
)

func isPathLike(s string) bool {
	return s != "" && !strings.ContainsAny(s, " \t") && (strings.ContainsAny(s, "/\\") || jsFileRE.MatchString(s))
}

// caseName applies the naming rules (see JUnit) and returns name and suite.
func (p *junitParser) caseName(c *junitCase) (string, string) {
	cls, name := strings.TrimSpace(c.classname), strings.TrimSpace(c.name)
	suite := c.suite
	if name == "" {
		name = cls
		cls = ""
	}
	if name == "" {
		return "(unnamed)", suite
	}
	if p.producer == prodPytest {
		if id, file, ok := pytestNodeID(cls, name, c.file); ok {
			return id, file
		}
		if cls == "" {
			return name, suite
		}
		return cls + "." + name, cls
	}
	switch {
	case cls == "":
		return name, suite
	case p.producer == prodVitest || isPathLike(cls):
		return cls + " > " + name, cls
	case name == cls || strings.HasPrefix(name, cls+" "):
		return name, suite
	case p.producer == prodJest:
		return cls + " > " + name, suite
	case javaClassRE.MatchString(cls):
		return cls + "." + strings.TrimSuffix(name, "()"), cls
	}
	return cls + " > " + name, suite
}

// pytestNodeID rebuilds "path/test_mod.py::Class::test_name" from a pytest
// testcase.
func pytestNodeID(cls, name, file string) (id, path string, ok bool) {
	parts := []string{}
	if cls != "" {
		parts = strings.Split(cls, ".")
	}
	if file != "" {
		// xunit1's classname is the node id's path with "/" made "." and
		// ".py" dropped, then its classes; name is the node id's last
		// part. Doctests: "README.rst" (--doctest-glob: the file's name),
		// "pkg.mod.func" (--doctest-modules: the object's dotted name).
		file = strings.ReplaceAll(file, "\\", "/")
		mod := strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")
		switch {
		case cls == "" && (name == mod || name == file):
			return file, file, true
		case cls == mod:
			return file + "::" + name, file, true
		case strings.HasPrefix(cls, mod+"."):
			rest := strings.Split(strings.TrimPrefix(cls, mod+"."), ".")
			return file + "::" + strings.Join(rest, "::") + "::" + name, file, true
		}
	}
	if cls == "" {
		// A collection error: the name is the dotted module.
		parts = strings.Split(name, ".")
		if len(parts) > 0 && pyTestFileRE.MatchString(parts[len(parts)-1]) && allIdents(parts) {
			p := strings.Join(parts, "/") + ".py"
			return p, p, true
		}
		return "", "", false
	}
	// Without a file attribute (xunit2): a text file's doctest, its
	// classname the dotted path and its name the file's name.
	if docTextRE.MatchString(name) && (cls == name || strings.HasSuffix(cls, "."+name)) {
		dir := strings.TrimSuffix(strings.TrimSuffix(cls, name), ".")
		p := name
		if dir != "" {
			p = strings.ReplaceAll(dir, ".", "/") + "/" + name
		}
		return p + "::" + name, p, true
	}
	if !allIdents(parts) {
		return "", "", false
	}
	// The module is the last test_*/*_test component; only classes
	// (capitalised) may follow it.
	mod := -1
	for i := len(parts) - 1; i >= 0; i-- {
		if pyTestFileRE.MatchString(parts[i]) {
			mod = i
			break
		}
		if !pyClassRE.MatchString(parts[i]) {
			break
		}
	}
	if mod < 0 {
		return pytestModuleDoctest(parts, name)
	}
	p := strings.Join(parts[:mod+1], "/") + ".py"
	id = p
	for _, cl := range parts[mod+1:] {
		id += "::" + cl
	}
	return id + "::" + name, p, true
}

// docTextRE matches the name of a text file pytest collects doctests from
// (--doctest-glob).
var docTextRE = regexp.MustCompile(`^[\w-][\w.-]*\.(?:rst|rest|md|markdown|txt|text|doctest)$`)

// pytestModuleDoctest rebuilds the node id of a module's doctest
// (--doctest-modules) from a classname without a file attribute: the
// classname is the module's path ("src.calc.ops", "calc.__init__"), the
// name the object's dotted name, which starts with the module's import
// name (a suffix of the path: "calc.ops.add", "calc").
func pytestModuleDoctest(parts []string, name string) (id, path string, ok bool) {
	if len(parts) == 0 || strings.ContainsAny(name, " [(") {
		return "", "", false
	}
	pkg := parts
	if parts[len(parts)-1] == "__init__" {
		pkg = parts[:len(parts)-1]
	}
	for k := 0; k < len(pkg); k++ {
		imp := strings.Join(pkg[k:], ".")
		if name == imp || strings.HasPrefix(name, imp+".") {
			p := strings.Join(parts, "/") + ".py"
			return p + "::" + name, p, true
		}
	}
	return "", "", false
}

func allIdents(parts []string) bool {
	for _, s := range parts {
		if !pyIdentRE.MatchString(s) {
			return false
		}
	}
	return true
}
