// libsodium: authenticated encryption, keyed hashing, key derivation, and the helpers
// (random bytes, constant-time comparison, zeroing, base64 and hex) that go with them.
#include <sodium.h>
