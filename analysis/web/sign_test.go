package web

import "testing"

// RFC 4231, test case 2: HMAC-SHA256 of "what do ya want for nothing?" with
// the key "Jefe".
func TestSignMatchesRFC4231(t *testing.T) {
	const want = "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
	if got := Sign([]byte("Jefe"), []byte("what do ya want for nothing?")); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

func TestVerify(t *testing.T) {
	key, body := []byte("k"), []byte(`{"a":1}`)
	sig := Sign(key, body)
	cases := []struct {
		name      string
		key, body []byte
		signature string
		want      bool
	}{
		{"same key and body", key, body, sig, true},
		{"other body", key, []byte(`{"a":2}`), sig, false},
		{"other key", []byte("K"), body, sig, false},
		{"without prefix", key, body, sig[len("sha256="):], false},
		{"empty", key, body, "", false},
	}
	for _, c := range cases {
		if got := Verify(c.key, c.body, c.signature); got != c.want {
			t.Errorf("%s: Verify = %v, want %v", c.name, got, c.want)
		}
	}
}
