// Courier's view of the system zlib. `deflateInit2` and `inflateInit2` are macros (they pass
// the library version and the size of z_stream), which Swift cannot import, so they are
// wrapped here as functions.
#ifndef COURIER_ZLIB_SHIM_H
#define COURIER_ZLIB_SHIM_H

#include <zlib.h>

static inline int courier_deflateInit2(
    z_streamp stream, int level, int windowBits, int memLevel, int strategy) {
  return deflateInit2(stream, level, Z_DEFLATED, windowBits, memLevel, strategy);
}

static inline int courier_inflateInit2(z_streamp stream, int windowBits) {
  return inflateInit2(stream, windowBits);
}

#endif
