{{ config(materialized='table', unique_key=['customer'], distributed_by=['customer'], buckets=1) }}
select customer, sum(amount) as total, count(*) as orders
from {{ ref('orders') }}
group by customer
