// The scorer of omARI (omari_scorer.hpp), for every table a search may take (table_search.hpp).
#include "salsox/omari_scorer.hpp"
#include "table_search.hpp"

#define SALSOX_SCORER(Label, Count)                                                                                 \
  template class salsox::OmariScorer<Label, Count>;                                                                 \
  template std::unique_ptr<salsox::TableScorer<Label, Count>> salsox::make_scorer<salsox::OmariScorer>(             \
      const salsox::CountTableState<Label, Count>&, const salsox::EngineOptions&);
SALSOX_FOR_TABLES(SALSOX_SCORER)
