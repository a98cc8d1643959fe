#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0
#
# tap-summary.pl FILE: read the TAP stream FILE with TAP::Parser (what
# prove uses) and print one line, "N passed, N failed[, N skipped]". A
# stream that breaks its plan or the TAP grammar counts one failure more.
# Exit status: 0 when nothing failed, 1 otherwise, 2 on a usage error.
use strict;
use warnings;
use TAP::Parser;

if (@ARGV != 1) {
	print STDERR "usage: $0 FILE\n";
	exit 2;
}
open(my $fh, '<', $ARGV[0]) or die "$0: $ARGV[0]: $!\n";
my $tap = do { local $/; <$fh> };
my $parser = TAP::Parser->new({ tap => $tap });
my ($passed, $failed, $skipped) = (0, 0, 0);
while (my $result = $parser->next) {
	next unless $result->is_test;
	if (!$result->is_ok) {
		$failed++;
	} elsif ($result->has_skip) {
		$skipped++;
	} else {
		$passed++;
	}
}
for my $error ($parser->parse_errors) {
	print "# the TAP stream: $error\n";
	$failed++;
}
my $line = "$passed passed, $failed failed";
$line .= ", $skipped skipped" if $skipped;
print "$line\n";
exit($failed ? 1 : 0);
