// uPlot's stylesheet, imported as text (esbuild: `with { type: "text" }`) and injected by chart.ts.
declare module "uplot/dist/uPlot.min.css" {
  const css: string;
  export default css;
}
