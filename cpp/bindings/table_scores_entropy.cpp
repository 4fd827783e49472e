// The scorer of NVI, ID and NID (entropy_scorer.hpp), for every table a search may take
// (table_search.hpp). ID's cell sums are compiled with the cell-sum scorer's unit.
#include "salsox/entropy_scorer.hpp"
#include "table_search.hpp"

#define SALSOX_SCORER(Label, Count)                                                                                 \
  extern template class salsox::CellSumScorer<Label, Count>;                                                        \
  template class salsox::EntropyScorer<Label, Count>;                                                               \
  template std::unique_ptr<salsox::TableScorer<Label, Count>> salsox::make_scorer<salsox::EntropyScorer>(           \
      const salsox::CountTableState<Label, Count>&, const salsox::EngineOptions&);
SALSOX_FOR_TABLES(SALSOX_SCORER)
