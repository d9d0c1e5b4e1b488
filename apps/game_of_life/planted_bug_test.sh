#!/bin/sh
# game_of_life_planted_bug (docs/apps.md "game-of-life", "Planted bug"): the app built with
# HEAPLAB_MUTANT_NAME="game_of_life_orthogonal_candidates" gives candidates only to a new cell's
# four orthogonal neighbours. The initial cells spread their candidates that way too, so --check
# must fail (exit 1) already at generation 0 with a dead cell that has an alive neighbour and no
# candidate (the CPU model says so: GameOfLifeCheck.CatchesThePlantedOrthogonalCandidatesBug);
# the correct app must pass the same run. Random shapes (RANDOM_MODE some): a very sparse grid may
# hold no alive cell, a dense one may cover every diagonal neighbour orthogonally for a while, so
# it must be caught on at least one (at any generation). Exit code 4 from the app (not checked):
# no GPU, SKIPPED.
exec sh "$(dirname "$0")/../common/planted_bug_test.sh" "$1" "$2" \
  "game-of-life --width 64 --height 48 --iterations 6 --seed 3 --density 0.3 --check --check-every 1" \
  "FAILED at generation 0: .* holds no Candidate" \
  "no dead cell without its candidate reported at generation 0" \
  "" \
  "game-of-life --iterations 6 --check --check-every 1" \
  some
