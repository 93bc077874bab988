package bench

import "testing"

func TestParseResidentSet(t *testing.T) {
	status := "Name:\tmanager\nVmHWM:\t  190000 kB\nVmRSS:\t  180000 kB\nRssAnon:\t  150000 kB\nRssFile:\t   29000 kB\nRssShmem:\t    1000 kB\n"
	got, err := parseResidentSet(status)
	if err != nil {
		t.Fatal(err)
	}
	want := residentSize{total: 180000 << 10, anon: 150000 << 10, file: 29000 << 10, highWater: 190000 << 10}
	if got != want {
		t.Errorf("parseResidentSet = %+v, want %+v", got, want)
	}
	for name, bad := range map[string]string{
		"no RssFile":  "VmHWM:\t1 kB\nVmRSS:\t1 kB\nRssAnon:\t1 kB\n",
		"not numeric": "VmHWM:\t1 kB\nVmRSS:\tmany kB\nRssAnon:\t1 kB\nRssFile:\t1 kB\n",
	} {
		if _, err := parseResidentSet(bad); err == nil {
			t.Errorf("%s: parseResidentSet(%q) took it", name, bad)
		}
	}
}
