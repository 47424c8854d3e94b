package instrument

import (
	"context"
	"strings"
	"testing"
)

// TestASTHostileSource: odd or hostile source text never makes the AST
// instrumenter fail or produce code that differs from the original beyond markers.
func TestASTHostileSource(t *testing.T) {
	needPython(t)
	cases := []struct {
		name, code string
		points     int // -1: any
	}{
		{"empty", "", 0},
		{"null byte", "import os\nx = '\x00'\n", 0},
		{"invalid UTF-8", "import os\nx = '\xff'\n", 0},
		{"deep nesting", "x = " + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000) + "\n", 0},
		{"long expression", "import os\nx = " + strings.Repeat("1+", 200000) + "1\n", -1},
		{"over 1 MiB", "import os\n" + strings.Repeat("# pad\n", 200000), 0},
		{"lone carriage returns", "import os\rimport pandas as pd\rdf = pd.read_csv('x')\r", -1},
		{"tabs and form feed", "import os\nif True:\n\tdf = open('x').read()\n\f\nprint(1)\n", 2},
		{"non-ASCII before a statement", "import os\ns = 'é'; df = open('x').read()\n", 2},
		{"no trailing newline", "import pandas as pd\ndf = pd.read_csv('x')", 2},
		{"return in one-line def", "import pandas as pd\ndef f(): return pd.read_csv('x')\ndf = f()\n", 2},
		{"async and match", "import pandas as pd\nasync def g():\n    df = pd.read_csv('x')\nmatch 1:\n    case 1: df = pd.read_csv('y')\n    case _:\n        pass\n", 3},
		{"class body", "from sklearn.svm import SVC\nclass C:\n    m = SVC()\n", 2},
		{"semicolon then multi-line", "import pandas as pd\ndf = pd.read_csv('x'); s = (1,\n 2)\ny = 1\n", 2},
		{"backslash continuation", "import pandas as pd\ndf = pd.read_csv('x') \\\n  .dropna()\n", 2},
	}
	in := NewAST("")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Prepare(context.Background(), in, tc.code)
			if err != nil {
				t.Fatal(err)
			}
			if tc.points >= 0 && p.Points != tc.points {
				t.Errorf("points %d, want %d; sealed:\n%s", p.Points, tc.points, p.Code)
			}
			if p.Points == 0 && p.Code != tc.code {
				t.Errorf("code changed without markers")
			}
			// Removing the seal's lines gives back the original exactly.
			if p.Points > 0 {
				var kept []string
				for i, line := range strings.Split(p.Code, "\n") {
					if p.OriginalLine(i+1) != 0 {
						kept = append(kept, line)
					}
				}
				if strings.Join(kept, "\n") != tc.code {
					t.Errorf("sealed code minus added lines differs from the original:\n%s", p.Code)
				}
			}
		})
	}
}
