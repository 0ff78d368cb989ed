"""Apache Doris' own session variables: the ones Doris clients, tools and Doris' regression suites set.

A Doris script starts with `SET enable_nereids_planner = true; SET parallel_pipeline_task_num = 1; …`;
refusing one (MySQL's 1193, unknown variable) stops the script before its first real statement. So
every variable below is accepted, typed (a bad value fails the SET, as in Doris) and shown by
SHOW VARIABLES and `@@name`, with Doris' default.

Most of them tune Doris' planner, executor or storage engine, which Strata does not have: setting
them has no effect. Those that change what a query answers are in `READ_OPTIONS` and do so
(`ReadOptions`):

* `skip_delete_predicate` — rows removed by DELETE … WHERE are read again;
* `skip_delete_sign` — rows a load marked with the delete sign (`__DORIS_DELETE_SIGN__`) are read;
* `skip_storage_engine_merge` — Unique and Aggregate Key tables are read as Duplicate Key tables:
  every loaded row version, unmerged (delete signs then count as rows too);
* `skip_delete_bitmap` — a merge-on-write Unique Key table shows the row versions later loads
  replaced: in Strata, whose Unique Key tables merge on read, the same as not merging them.

The list is Doris 2.1/3.0's `SessionVariable` names that suites and tools set; an unknown name is
still refused, so a typo does not pass silently.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


def on_off(value: Any) -> bool:
    """A boolean variable as MySQL and Doris take it: ON/OFF, TRUE/FALSE, 1/0 (strings or numbers)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    text = str(value).strip().strip("'\"").upper()
    if text in ("ON", "TRUE", "1"):
        return True
    if text in ("OFF", "FALSE", "0"):
        return False
    raise ValueError(f"'{value}' is not a boolean")


def _text(value: Any) -> str:
    return str(value).strip().strip("'\"")


_BOOL: Callable[[Any], bool] = on_off

# name → (type, Doris' default). Every one is settable per session.
_DORIS: dict[str, tuple[Callable[[Any], Any], Any]] = {
    # Planner and engine switches (no effect in Strata).
    "enable_nereids_planner": (_BOOL, True),
    "experimental_enable_nereids_planner": (_BOOL, True),
    "enable_fallback_to_original_planner": (_BOOL, False),
    "enable_nereids_dml": (_BOOL, True),
    "enable_nereids_dml_with_pipeline": (_BOOL, True),
    "enable_nereids_distribute_planner": (_BOOL, True),
    "enable_nereids_timeout": (_BOOL, True),
    "nereids_timeout_second": (int, 30),
    "disable_nereids_rules": (_text, ""),
    "enable_nereids_rules": (_text, ""),
    "disable_nereids_expression_rules": (_text, ""),
    "enable_nereids_trace": (_BOOL, False),
    "enable_pipeline_engine": (_BOOL, True),
    "enable_pipeline_x_engine": (_BOOL, True),
    "experimental_enable_pipeline_engine": (_BOOL, True),
    "experimental_enable_pipeline_x_engine": (_BOOL, True),
    "enable_vectorized_engine": (_BOOL, True),
    "enable_local_shuffle": (_BOOL, True),
    "enable_local_exchange": (_BOOL, True),
    "enable_shared_scan": (_BOOL, False),
    "enable_parallel_scan": (_BOOL, True),
    "enable_parallel_result_sink": (_BOOL, True),
    "parallel_pipeline_task_num": (int, 0),
    "parallel_fragment_exec_instance_num": (int, 8),
    "parallel_exchange_instance_num": (int, -1),
    "max_instance_num": (int, 64),
    "batch_size": (int, 4064),
    "exec_mem_limit": (int, 2147483648),
    "enable_spill": (_BOOL, False),
    "enable_profile": (_BOOL, False),
    "profile_level": (int, 1),
    "auto_profile_threshold_ms": (int, -1),
    "enable_sql_cache": (_BOOL, False),
    "enable_query_cache": (_BOOL, False),
    "enable_partition_cache": (_BOOL, False),
    "enable_condition_cache": (_BOOL, True),
    "enable_page_cache": (_BOOL, True),
    "enable_file_cache": (_BOOL, False),
    "disable_file_cache": (_BOOL, False),
    "enable_fold_constant_by_be": (_BOOL, False),
    "debug_skip_fold_constant": (_BOOL, False),
    "enable_fold_nondeterministic_fn": (_BOOL, False),
    "enable_cost_based_join_reorder": (_BOOL, False),
    "disable_join_reorder": (_BOOL, False),
    "enable_bucket_shuffle_join": (_BOOL, True),
    "disable_colocate_plan": (_BOOL, False),
    "prefer_join_method": (_text, "broadcast"),
    "enable_runtime_filter_prune": (_BOOL, True),
    "runtime_filter_mode": (_text, "GLOBAL"),
    "runtime_filter_type": (_text, "IN_OR_BLOOM_FILTER,MIN_MAX"),
    "runtime_filter_wait_time_ms": (int, 1000),
    "runtime_filter_wait_infinitely": (_BOOL, False),
    "runtime_filter_max_in_num": (int, 1024),
    "runtime_bloom_filter_size": (int, 2097152),
    "enable_common_expr_pushdown": (_BOOL, True),
    "enable_function_pushdown": (_BOOL, False),
    "enable_push_down_no_group_agg": (_BOOL, True),
    "enable_two_phase_read_opt": (_BOOL, True),
    "topn_opt_limit_threshold": (int, 1024),
    "enable_inverted_index_query": (_BOOL, True),
    "enable_count_on_index_pushdown": (_BOOL, True),
    "enable_match_without_inverted_index": (_BOOL, True),
    "enable_no_need_read_data_opt": (_BOOL, True),
    "enable_short_circuit_query": (_BOOL, True),
    "enable_projection": (_BOOL, True),
    "enable_agg_state": (_BOOL, False),
    "enable_decimal256": (_BOOL, False),
    "check_overflow_for_decimal": (_BOOL, True),
    "decimal_overflow_scale": (int, 6),
    "enable_unicode_name_support": (_BOOL, False),
    "enable_server_side_prepared_statement": (_BOOL, True),
    "max_prepared_stmt_count": (int, 100000),
    "forward_to_master": (_BOOL, True),
    "sql_dialect": (_text, "doris"),
    "return_object_data_as_binary": (_BOOL, False),
    "default_order_by_limit": (int, -1),
    "partition_pruning_expand_threshold": (int, 10),
    "group_by_and_having_use_alias_first": (_BOOL, False),
    "use_fix_replica": (int, -1),
    "dry_run_query": (_BOOL, False),
    "show_user_default_role": (_BOOL, False),
    "enable_strict_consistency_dml": (_BOOL, True),
    "skip_missing_version": (_BOOL, False),
    "skip_bad_tablet": (_BOOL, False),
    "skip_prune_predicate": (_BOOL, False),
    "enable_single_replica_insert": (_BOOL, False),
    # Loads (no effect: Strata's INSERT is always strict and all-or-nothing).
    "enable_insert_strict": (_BOOL, True),
    "insert_max_filter_ratio": (float, 1.0),
    "enable_insert_value_auto_cast": (_BOOL, True),
    "insert_visible_timeout_ms": (int, 60000),
    "send_batch_parallelism": (int, 1),
    "enable_memtable_on_sink_node": (_BOOL, True),
    "load_stream_per_node": (int, 2),
    "delete_without_partition": (_BOOL, False),
    "allow_partition_column_nullable": (_BOOL, True),
    "enable_unique_key_partial_update": (_BOOL, False),
    "enable_auto_create_when_overwrite": (_BOOL, False),
    "enable_join_spill": (_BOOL, False),
    "enable_sort_spill": (_BOOL, False),
    "enable_agg_spill": (_BOOL, False),
    "enable_local_merge_sort": (_BOOL, True),
    "enable_distinct_streaming_aggregation": (_BOOL, True),
    "disable_streaming_preaggregations": (_BOOL, False),
    "enable_stats": (_BOOL, True),
    "enable_auto_analyze": (_BOOL, True),
    "enable_materialized_view_rewrite": (_BOOL, True),
    "enable_materialized_view_nest_rewrite": (_BOOL, False),
    "enable_sync_mv_cost_based_rewrite": (_BOOL, True),
    "workload_group": (_text, "normal"),
    "resource_group": (_text, ""),
    "cpu_resource_limit": (int, -1),
    "lower_case_table_names": (int, 0),
    "event_scheduler": (_text, "OFF"),
    "profiling": (_BOOL, False),
    "block_encryption_mode": (_text, ""),
    "auto_increment_increment": (int, 1),
    "net_buffer_length": (int, 16384),
    "lc_time_names": (_text, "en_US"),
    # Read options that change answers (module docstring).
    "skip_delete_predicate": (_BOOL, False),
    "skip_delete_sign": (_BOOL, False),
    "skip_storage_engine_merge": (_BOOL, False),
    "skip_delete_bitmap": (_BOOL, False),
    # Unique Key tables: SELECT * and DESC show Doris' hidden columns (and rows a delete sign hides).
    "show_hidden_columns": (_BOOL, False),
}

# mysql-mimic's variable schema: (type, default, settable).
DORIS_VARIABLES: dict[str, tuple[Any, Any, bool]] = {name: (kind, default, True)
                                                     for name, (kind, default) in _DORIS.items()}


def session_flag(variables: Mapping[str, Any], name: str) -> bool:
    """A boolean Doris variable's value in a session's variables (SessionState.system_variables); its
    default where they have none (outside the server they are empty)."""
    value = variables.get(name)
    return on_off(_DORIS[name][1] if value is None else value)


@dataclass(frozen=True)
class ReadOptions:
    """How a session's reads treat deletes, merging and hidden columns (the module docstring's read
    options, and show_hidden_columns)."""

    delete_predicates: bool = True
    delete_signs: bool = True
    merge: bool = True
    show_hidden: bool = False

    @classmethod
    def of(cls, variables: Mapping[str, Any]) -> ReadOptions:
        """From a session's variables (SessionState.system_variables)."""
        return cls(delete_predicates=not session_flag(variables, "skip_delete_predicate"),
                   delete_signs=not session_flag(variables, "skip_delete_sign"),
                   merge=not (session_flag(variables, "skip_storage_engine_merge")
                              or session_flag(variables, "skip_delete_bitmap")),
                   show_hidden=session_flag(variables, "show_hidden_columns"))


PLAIN_READ = ReadOptions()  # Doris' defaults: deletes apply, keys merge
