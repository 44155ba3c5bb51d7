/** Markdown files imported as text (`with { type: "text" }`): the example agents dl init copies. */
declare module "*.md" {
  const text: string;
  export default text;
}
