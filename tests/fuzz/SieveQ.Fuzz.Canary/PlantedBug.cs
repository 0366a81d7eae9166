namespace SieveQ.Fuzz.Canary;

/// <summary>Reads past its table on inputs starting "bug": found in seconds only when coverage guides the search.</summary>
public static class PlantedBug
{
    public static int Parse(ReadOnlySpan<byte> input)
    {
        var table = new int[2];
        if (input.Length > 0 && input[0] == 'b')
        {
            if (input.Length > 1 && input[1] == 'u')
            {
                if (input.Length > 2 && input[2] == 'g')
                {
                    return table[input.Length];
                }
                return 2;
            }
            return 1;
        }
        return 0;
    }
}
