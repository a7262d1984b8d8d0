// Swagger UI's redirect page is imported as text by wrangler's default rule for `*.html`; the
// other files of src/routes/sys/docs.ts are declared by `npm run types` from wrangler.toml's [[rules]].
declare module "swagger-ui-dist/*.html" {
  const text: string;
  export default text;
}
