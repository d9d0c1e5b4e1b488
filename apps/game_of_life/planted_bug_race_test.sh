#!/bin/sh
# game_of_life_race_planted_bug (docs/apps.md "game-of-life", "Planted bug"): the app built with
# HEAPLAB_MUTANT_NAME="game_of_life_candidate_without_cas" tests a neighbour for emptiness and
# then stores its candidate, without the compare-and-swap: two new cells that test the same
# empty cell at once both make a candidate and one object is lost from the grid. --check must
# report the leaked object (exit 1) on a dense 1024 x 1024 run, where thousands of new cells share
# empty neighbours in every generation (the CPU model with every such pair interleaved at its
# worst: GameOfLifeCheck.CatchesThePlantedCandidateWithoutCasBug); the correct app must pass the
# same run. Random shapes (RANDOM_MODE some): a race need not happen on a small grid, so it must
# be caught on at least one. Exit code 4 from the app (not checked): no GPU, SKIPPED.
exec sh "$(dirname "$0")/../common/planted_bug_test.sh" "$1" "$2" \
  "game-of-life --width 1024 --height 1024 --iterations 4 --seed 3 --density 0.3 --check --check-every 1" \
  "FAILED at generation [0-9]*: .* a leaked object" \
  "no leaked candidate reported" \
  "" \
  "game-of-life --iterations 8 --check --check-every 1" \
  some
