package embed

import (
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // a substring of the error; "" for none
	}{
		{name: "zero value", cfg: Config{}},
		{name: "negative dim", cfg: Config{Dim: -1}, want: "dim = -1"},
		{name: "negative window", cfg: Config{Window: -2}, want: "window = -2"},
		{name: "negative min count", cfg: Config{MinCount: -1}, want: "min_count = -1"},
		{name: "negative max words", cfg: Config{MaxWords: -5}, want: "max_words = -5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Config%+v.Validate() = %v; want an error containing %q", tt.cfg, err, tt.want)
			}
		})
	}
}
