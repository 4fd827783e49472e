// The draws' compact form (draws.hpp) from labels of every integer width (engine_calls.hpp).
#include "engine_calls.hpp"

namespace salsox::bindings {

template <class Int>
CompactDraws* new_compact_draws(const Int* labels, std::int64_t H, std::int64_t n) {
  return new CompactDraws(labels, H, n);
}
#define SALSOX_DRAWS(Int) template CompactDraws* new_compact_draws(const Int*, std::int64_t, std::int64_t);
SALSOX_DRAWS(std::int8_t)
SALSOX_DRAWS(std::uint8_t)
SALSOX_DRAWS(std::int16_t)
SALSOX_DRAWS(std::uint16_t)
SALSOX_DRAWS(std::int32_t)
SALSOX_DRAWS(std::uint32_t)
SALSOX_DRAWS(std::int64_t)
SALSOX_DRAWS(std::uint64_t)

}  // namespace salsox::bindings
