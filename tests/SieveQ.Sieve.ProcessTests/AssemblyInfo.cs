// Each test starts a whole deployment of processes on a small machine; one at a time.
[assembly: CollectionBehavior(DisableTestParallelization = true)]
