// The optional members of the search's State concept (see search.hpp), detected at compile
// time: the search uses each one where a State has it and falls back to the required members
// (clear, add, remove, close_slot, score, ...) where it does not.
#pragma once
#include <type_traits>
#include <utility>

namespace salsox {

// Whether a State can use threads inside a run (see CountTable::set_threads).
template <class S, class = void>
struct has_set_threads : std::false_type {};
template <class S>
struct has_set_threads<S, std::void_t<decltype(std::declval<S&>().set_threads(1))>> : std::true_type {};

// Whether a State reports the threads its passes had (threads_used, reset_threads_used;
// score_threads_used), recomputes its running sums (refresh_sums) and their drift (sums_drift).
template <class S, class = void>
struct has_threads_used : std::false_type {};
template <class S>
struct has_threads_used<S, std::void_t<decltype(std::declval<S&>().threads_used()),
                                       decltype(std::declval<S&>().reset_threads_used())>> : std::true_type {};
template <class S, class = void>
struct has_score_threads : std::false_type {};
template <class S>
struct has_score_threads<S, std::void_t<decltype(std::declval<const S&>().score_threads_used())>> : std::true_type {};
template <class S, class = void>
struct has_refresh : std::false_type {};
template <class S>
struct has_refresh<S, std::void_t<decltype(std::declval<S&>().refresh_sums())>> : std::true_type {};
template <class S, class = void>
struct has_sums_drift : std::false_type {};
template <class S>
struct has_sums_drift<S, std::void_t<decltype(std::declval<const S&>().sums_drift())>> : std::true_type {};

// Whether a State can score an allocated item in place and move it in one step (score_move,
// move), and release a whole slot and snapshot itself (release_slot, snapshot, restore,
// prefers_table_pass). Others are searched with remove / score / add.
template <class S, class = void>
struct has_move : std::false_type {};
template <class S>
struct has_move<S, std::void_t<decltype(std::declval<S&>().score_move(0, nullptr)),
                               decltype(std::declval<S&>().move(0, 0))>> : std::true_type {};
template <class S, class = void>
struct has_snapshot : std::false_type {};
template <class S>
struct has_snapshot<S, std::void_t<decltype(std::declval<S&>().snapshot()),
                                   decltype(std::declval<S&>().restore()),
                                   decltype(std::declval<S&>().release_slot(0)),
                                   decltype(std::declval<S&>().prefers_table_pass(0))>>
    : std::true_type {};

}  // namespace salsox
