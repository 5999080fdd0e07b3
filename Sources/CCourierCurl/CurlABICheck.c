// Where libcurl's development headers exist, proves at compile time that Courier's own
// declarations of libcurl's ABI (CourierCurlABI.h and .def) match them: every constant's
// value, every scalar type's compatibility, and every structure's size and its fields'
// offsets, sizes and types. CurlABISignatures.c checks the functions and callbacks. Where the
// headers do not exist there is nothing to compare with, and this file only says so
// (courier_curl_abi_checked).
#if __has_include(<curl/curl.h>)

#define CURL_DISABLE_TYPECHECK 1
// Deprecated options (CURLOPT_PROTOCOLS) are checked too, without a warning.
#define CURL_DISABLE_DEPRECATION 1
#include <curl/curl.h>
#include <stddef.h>

#include "CourierCurlABI.h"

const int courier_curl_abi_checked = 1;

#define COURIER_CURL_CONSTANT(type, name, value) \
  _Static_assert((name) == (value), "Courier's " #name " (" #value ") differs from <curl/curl.h>'s");
#include "CourierCurlABI.def"
#undef COURIER_CURL_CONSTANT

/// A structure of Courier's has the offset and size of libcurl's for one field.
#define COURIER_SAME_LAYOUT(ours, theirs, field)                               \
  _Static_assert(offsetof(ours, field) == offsetof(theirs, field)              \
                     && sizeof(((ours *)0)->field) == sizeof(((theirs *)0)->field), \
                 "Courier's " #theirs "." #field " is not laid out as in <curl/curl.h>");

/// ... and a type compatible with libcurl's: the same size is not enough, since a signed field
/// for an unsigned one, or one pointer type for another, would read the same bytes wrongly.
#define COURIER_SAME_FIELD(ours, theirs, field)                                      \
  COURIER_SAME_LAYOUT(ours, theirs, field)                                           \
  _Static_assert(__builtin_types_compatible_p(__typeof__(((ours *)0)->field),        \
                                              __typeof__(((theirs *)0)->field)),     \
                 "Courier's " #theirs "." #field " has another type than in <curl/curl.h>");

_Static_assert(sizeof(struct courier_curl_slist) == sizeof(struct curl_slist), "Courier's struct curl_slist differs in size");
COURIER_SAME_FIELD(struct courier_curl_slist, struct curl_slist, data)
// A pointer to the structure itself, whose tag is Courier's own here.
COURIER_SAME_LAYOUT(struct courier_curl_slist, struct curl_slist, next)

_Static_assert(sizeof(struct courier_curl_message) == sizeof(CURLMsg), "Courier's CURLMsg differs in size");
COURIER_SAME_FIELD(struct courier_curl_message, CURLMsg, msg)
COURIER_SAME_FIELD(struct courier_curl_message, CURLMsg, easy_handle)
// An unnamed union: its members are checked one by one.
COURIER_SAME_LAYOUT(struct courier_curl_message, CURLMsg, data)
COURIER_SAME_FIELD(struct courier_curl_message, CURLMsg, data.whatever)
COURIER_SAME_FIELD(struct courier_curl_message, CURLMsg, data.result)

_Static_assert(sizeof(struct courier_curl_blob) == sizeof(struct curl_blob), "Courier's struct curl_blob differs in size");
COURIER_SAME_FIELD(struct courier_curl_blob, struct curl_blob, data)
COURIER_SAME_FIELD(struct courier_curl_blob, struct curl_blob, len)
COURIER_SAME_FIELD(struct courier_curl_blob, struct curl_blob, flags)

// Prefixes of longer structures: only the fields Courier declares.
COURIER_SAME_FIELD(struct courier_curl_version_info, curl_version_info_data, age)
COURIER_SAME_FIELD(struct courier_curl_version_info, curl_version_info_data, version)
COURIER_SAME_FIELD(struct courier_curl_version_info, curl_version_info_data, version_num)
COURIER_SAME_FIELD(struct courier_curl_sockaddr, struct curl_sockaddr, family)
COURIER_SAME_FIELD(struct courier_curl_sockaddr, struct curl_sockaddr, socktype)
COURIER_SAME_FIELD(struct courier_curl_sockaddr, struct curl_sockaddr, protocol)
COURIER_SAME_FIELD(struct courier_curl_sockaddr, struct curl_sockaddr, addrlen)

#else

const int courier_curl_abi_checked = 0;

#endif
