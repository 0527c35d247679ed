/**
 * uPlot, as its own script (`/assets/dashboard-charts.js`): the overview imports it when it draws
 * its charts, so no other screen loads it (half of the app's bytes).
 */
export { default as uPlot } from "uplot";
