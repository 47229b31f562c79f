#!/usr/bin/env bash
# Runs the alerting rules' own tests (artifacts/prometheus/rules_test.yaml)
# with promtool. promtool comes with Debian's prometheus package; it is
# installed when missing and apt-get can (as on CI's machines).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v promtool >/dev/null; then
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
		echo "alert-rules: promtool is not on PATH; install Debian's prometheus package (or a Prometheus release) to run this" >&2
		exit 1
	fi
	echo "alert-rules: installing promtool (Debian package prometheus)" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq --no-install-recommends prometheus >/dev/null ||
		{ apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }
fi
promtool check rules artifacts/prometheus/rules.yaml
promtool test rules artifacts/prometheus/rules_test.yaml
