// The tests start whole clusters of processes on a small machine; running them one at a time keeps
// their timing bounds meaningful.
[assembly: CollectionBehavior(DisableTestParallelization = true)]
