// The omARI score over count tables (scores_omari.hpp), for every table a search may take
// (table_search.hpp).
#include "salsox/scores_omari.hpp"
#include "table_search.hpp"

#define SALSOX_SCORES(Label, Count) \
  template void salsox::CountTableState<Label, Count>::score_omari_paths(std::int64_t, double*);
SALSOX_FOR_TABLES(SALSOX_SCORES)
