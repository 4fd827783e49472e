// The scores of NVI, ID and NID over count tables (scores_entropy.hpp), for every table a
// search may take (table_search.hpp).
#include "salsox/scores_entropy.hpp"
#include "table_search.hpp"

#define SALSOX_SCORES(Label, Count) \
  template void salsox::CountTableState<Label, Count>::score_entropy_paths(std::int64_t, double*);
SALSOX_FOR_TABLES(SALSOX_SCORES)
