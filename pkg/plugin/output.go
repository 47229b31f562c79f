package plugin

import (
	"encoding/json"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/yaml"
	"sigs.k8s.io/yaml/kyaml"
)

// outputFormats are what -o takes: cli-runtime's JSON and YAML printers,
// the ones kubectl's -o json, -o yaml and -o kyaml use.
var outputFormats = genericclioptions.NewJSONYamlPrintFlags().AllowedFormats()

// addOutputFlag adds -o/--output to a command that prints data; unset, it
// prints the table for people.
func addOutputFlag(cmd *cobra.Command, output *string) {
	cmd.Flags().StringVarP(output, "output", "o", "", "Output format, one of: "+strings.Join(outputFormats, ", ")+" (default: a table)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(outputFormats, cobra.ShellCompDirectiveNoFileComp))
}

// checkOutput refuses an -o value no printer takes, before any request.
func checkOutput(output string) error {
	if output != "" && !slices.Contains(outputFormats, output) {
		return badUsage("--output %q is not one of %s", output, strings.Join(outputFormats, ", "))
	}
	return nil
}

// printObject prints an API object (apiVersion and kind set) as kubectl
// get -o json|yaml does.
func printObject(w io.Writer, output string, obj runtime.Object) error {
	printer, err := genericclioptions.NewJSONYamlPrintFlags().ToPrinter(output)
	if err != nil {
		return err
	}
	return printer.PrintObj(obj, w)
}

// printData prints data that is no API object (next's times) in the same
// formats, indented as the JSON printer indents objects.
func printData(w io.Writer, output string, data any) error {
	var b []byte
	var err error
	switch output {
	case "json":
		b, err = json.MarshalIndent(data, "", "    ")
		b = append(b, '\n')
	case "kyaml":
		return (&kyaml.Encoder{}).FromObject(data, w)
	default:
		b, err = yaml.Marshal(data)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
