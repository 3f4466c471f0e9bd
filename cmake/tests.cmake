# Tests of the core, the reference checker, the oracles and the CLI.
collfuzz_add_gtest(collfuzz_core_tests
  SOURCES tests/core/case_parser_test.cpp tests/core/fill_test.cpp tests/core/outcome_json_test.cpp
  LIBS collfuzz_core)

collfuzz_add_gtest(collfuzz_reference_tests
  SOURCES tests/reference/accounting_test.cpp tests/reference/lowering_rules_test.cpp
          tests/reference/mesh_and_trace_rules_test.cpp tests/reference/rule_table_test.cpp
  LIBS collfuzz_reference)
