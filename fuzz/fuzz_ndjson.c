/*
** fuzz_ndjson.c -- the newline-delimited framer, fed the same bytes whole
** and in chunks whose sizes come from the input (see fuzz_framer in host.c).
*/
#include "host.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  return fuzz_framer(data, size, 0);
}
