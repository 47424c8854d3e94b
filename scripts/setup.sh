#!/usr/bin/env bash
# Installs what mlerl needs and is missing; safe to run again (it only installs
# what dpkg does not already report). Works as root or through sudo.
#   scripts/setup.sh          runtime: Debian's Python ML stack and bubblewrap, Go modules
#   scripts/setup.sh --suite  also R and the r-cran data packages (only to rebuild the suite)
#   scripts/setup.sh --unseen also R, the r-cran data packages and wordnet-base of bench/unseen/ (only to rebuild it)
#   scripts/setup.sh --tuning also fortunes, the data of bench/tuning/ (only to rebuild it)
#   scripts/setup.sh --bench  also jq, for the scripts in bench/
#   scripts/setup.sh --browser also chromium, for the browser tests of `mlerl ui` (make test-long)
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=(python3 python3-numpy python3-pandas python3-scipy python3-sklearn python3-xgboost python3-pil bubblewrap)
case "${1:-}" in
--suite) pkgs+=(r-base-core r-cran-modeldata r-cran-janeaustenr r-cran-mlbench) ;;
--unseen) pkgs+=(r-base-core r-cran-modeldata r-cran-dslabs wordnet-base) ;;
--tuning) pkgs+=(fortunes) ;;
--bench) pkgs+=(jq) ;;
--browser) pkgs+=(chromium) ;;
esac

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if ((${#missing[@]})); then
	if [[ $(id -u) -eq 0 ]]; then
		sudo=()
	elif command -v sudo >/dev/null; then
		sudo=(sudo)
	else
		echo "setup: need root or sudo to install: ${missing[*]}" >&2
		exit 2
	fi
	echo "setup: installing ${missing[*]}" >&2
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v go >/dev/null; then
	for d in /usr/local/go/bin "$HOME/go/bin"; do [[ -x $d/go ]] && export PATH="$d:$PATH"; done
fi
command -v go >/dev/null || { echo "setup: Go 1.26 or newer is required (https://go.dev/doc/install)" >&2; exit 2; }
go mod download
