/** Chart.js, registered once for the whole page; imported dynamically (chart-base.ts) so it loads in its own chunk when the first chart draws. */
import {
  Chart,
  Filler,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  LogarithmicScale,
  PointElement,
  ScatterController,
  Tooltip,
  BarController,
  BarElement,
  CategoryScale,
} from 'chart.js';

Chart.register(
  LineController,
  ScatterController,
  BarController,
  LineElement,
  PointElement,
  BarElement,
  LinearScale,
  LogarithmicScale,
  CategoryScale,
  Legend,
  Tooltip,
  Filler,
);

export { Chart };
