// The page is served by `stategraph serve --ui dist` under /app/; `npm run dev` proxies
// the API to a server on :2024 (STATEGRAPH_URL to change it).
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

const api = process.env.STATEGRAPH_URL ?? "http://127.0.0.1:2024";
const apiPaths = ["/assistants", "/threads", "/runs", "/store", "/info", "/ok"];

export default defineConfig({
  base: "/app/",
  plugins: [react()],
  build: { chunkSizeWarningLimit: 1024 },
  server: {
    proxy: Object.fromEntries(apiPaths.map((path) => [path, api])),
  },
});
