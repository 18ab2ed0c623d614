// bench.d/scan-simdjson.cpp: the reference line of tests/bench.d/scan.sh,
// built only where libsimdjson-dev is installed (never a part of kt).
// simdjson's on-demand parser walks the same trace as scan-kt: every
// event of traceEvents, each member's key and its value's raw token, and
// the members of args the same way.  It prints "BYTES EVENTS SECONDS",
// the best CPU time of N passes, the file read into a padded buffer
// before the clock starts.
//
// usage: scan-simdjson FILE [N]
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string_view>

#include <simdjson.h>

using namespace simdjson;

static double
cpu()
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int
main(int argc, char *argv[])
{
	if (argc < 2) {
		std::fprintf(stderr, "usage: scan-simdjson FILE [N]\n");
		return 2;
	}
	int reps = argc > 2 ? std::atoi(argv[2]) : 3;
	padded_string json;
	if (padded_string::load(argv[1]).get(json)) {
		std::fprintf(stderr, "scan-simdjson: cannot read %s\n", argv[1]);
		return 2;
	}
	ondemand::parser parser;
	double best = -1;
	unsigned long long n = 0;
	size_t sink = 0;
	for (int k = 0; k < reps; k++) {
		double t0 = cpu();
		n = 0;
		ondemand::document doc;
		ondemand::array events;
		if (parser.iterate(json).get(doc) ||
		    doc.find_field_unordered("traceEvents").get_array().get(events)) {
			std::fprintf(stderr, "scan-simdjson: %s: no traceEvents\n", argv[1]);
			return 2;
		}
		for (auto e : events) {
			ondemand::object ev;
			if (e.get_object().get(ev))
				return 2;
			for (auto f : ev) {
				std::string_view key;
				ondemand::value v;
				if (f.unescaped_key().get(key) || f.value().get(v))
					return 2;
				if (key == "args") {
					ondemand::object args;
					if (v.get_object().get(args))
						return 2;
					for (auto a : args) {
						std::string_view ak;
						ondemand::value av;
						if (a.unescaped_key().get(ak) ||
						    a.value().get(av))
							return 2;
						sink += ak.size() + av.raw_json_token().size();
					}
				} else
					sink += key.size() + v.raw_json_token().size();
			}
			n++;
		}
		double t = cpu() - t0;
		if (best < 0 || t < best)
			best = t;
	}
	std::printf("%zu %llu %.4f\n", json.size(), n, best);
	return sink == 1;	// keeps sink alive
}
