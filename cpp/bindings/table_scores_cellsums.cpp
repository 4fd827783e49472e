// The scores of Binder, VI and the tabulated losses over count tables (scores_binder_vi.hpp),
// for every table a search may take (table_search.hpp).
#include "salsox/scores_binder_vi.hpp"
#include "table_search.hpp"

#define SALSOX_SCORES(Label, Count)                                                                                \
  template void salsox::CountTableState<Label, Count>::score_binder(std::int64_t, double*);                       \
  template void salsox::CountTableState<Label, Count>::score_additive(std::int64_t, double*);                     \
  template const double* salsox::CountTableState<Label, Count>::cell_sums(std::int64_t);                         \
  template void salsox::CountTableState<Label, Count>::add_score(std::int64_t, std::int32_t, std::int64_t,        \
                                                                 double*);                                       \
  template void salsox::CountTableState<Label, Count>::fix_cell_table();
SALSOX_FOR_TABLES(SALSOX_SCORES)
