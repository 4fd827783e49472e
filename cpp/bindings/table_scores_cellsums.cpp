// The scorer of Binder, VI and the tabulated losses (cell_sum_scorer.hpp), for every table a
// search may take (table_search.hpp).
#include "salsox/cell_sum_scorer.hpp"
#include "table_search.hpp"

#define SALSOX_SCORER(Label, Count)                                                                                 \
  template class salsox::CellSumScorer<Label, Count>;                                                               \
  template std::unique_ptr<salsox::TableScorer<Label, Count>> salsox::make_scorer<salsox::CellSumScorer>(           \
      const salsox::CountTableState<Label, Count>&, const salsox::EngineOptions&);
SALSOX_FOR_TABLES(SALSOX_SCORER)
