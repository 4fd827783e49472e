// The SALSO searches over count tables of std::uint16_t counts (table_search.hpp).
#include "table_search_impl.hpp"

SALSOX_TABLE_SEARCH(std::uint16_t)
