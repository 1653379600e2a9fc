// Conformance cases expected to fail, with the reason. The harness fails on any other
// failing case (cases failing only because an op family's kernels are not merged yet are
// reported as pending, not failures). Keep this list short and every reason precise.

export const EXPECTED_FAILURES: Readonly<Record<string, string>> = {
};
